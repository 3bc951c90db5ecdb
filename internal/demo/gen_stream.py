#!/usr/bin/env python3
"""Regenerates stream.sse, the demo's recorded Anthropic Messages stream.

The stream has the shape of a real capture: a text block, then tool_use
blocks whose arguments arrive split mid-token, a ping, and the usual
message_delta/message_stop ending. Run: python3 gen_stream.py > stream.sse
"""
import json
import sys

out = []


def event(kind, data):
    out.append("event: %s\ndata: %s\n\n" % (kind, json.dumps(data, separators=(",", ":"))))


event("message_start", {"type": "message_start", "message": {
    "id": "msg_demo_01", "type": "message", "role": "assistant", "model": "claude-demo",
    "content": [], "stop_reason": None, "stop_sequence": None,
    "usage": {"input_tokens": 412, "output_tokens": 1}}})
event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
for t in ["Let me look around the project, ", "build it, and read the result back."]:
    event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}})
event("content_block_stop", {"type": "content_block_stop", "index": 0})
event("ping", {"type": "ping"})

calls = [
    ("toolu_demo_01", "Bash", {"command": "sleep 0.4 && ls -la", "description": "List the project files"}),
    ("toolu_demo_02", "Read", {"file_path": "notes.txt"}),
    ("toolu_demo_03", "Bash", {"command": "sleep 0.2 && wc -l notes.txt main.go", "description": "Count lines"}),
    ("toolu_demo_04", "Bash", {"command": "mkdir -p build && cp main.go build/ && echo built > build/STATUS", "description": "Build"}),
    ("toolu_demo_05", "Bash", {"command": "sleep 0.3 && grep -n TODO notes.txt", "description": "Find TODOs"}),
    ("toolu_demo_06", "Read", {"file_path": "build/STATUS"}),
]
for i, (cid, name, args) in enumerate(calls):
    idx = i + 1
    event("content_block_start", {"type": "content_block_start", "index": idx,
                                  "content_block": {"type": "tool_use", "id": cid, "name": name, "input": {}}})
    event("content_block_delta", {"type": "content_block_delta", "index": idx,
                                  "delta": {"type": "input_json_delta", "partial_json": ""}})
    text = json.dumps(args)
    for j in range(0, len(text), 14):
        event("content_block_delta", {"type": "content_block_delta", "index": idx,
                                      "delta": {"type": "input_json_delta", "partial_json": text[j:j + 14]}})
    event("content_block_stop", {"type": "content_block_stop", "index": idx})
event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                        "usage": {"output_tokens": 287}})
event("message_stop", {"type": "message_stop"})
sys.stdout.write("".join(out))
