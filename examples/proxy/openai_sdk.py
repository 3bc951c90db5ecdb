#!/usr/bin/env python3
"""The official OpenAI SDK with toolwire: the base URL points at `toolwire proxy`.

Chat Completions streams as usual through the proxy, which starts each tool
call as soon as the next one begins (or the stream finishes); the results come
in call order from toolwire's HTTP API as the tool messages of the next
request. Needs `pip install openai`.

    toolwire serve &
    python3 recorded_upstream.py --port 9001 --stream openai_chat.sse &   # or the real API
    toolwire proxy --listen 127.0.0.1:8083 --upstream http://127.0.0.1:9001 --format openai-chat &
    TOOLWIRE_PROXY=http://127.0.0.1:8083/v1 python3 openai_sdk.py
"""
import json
import os
import uuid

import openai

from toolwire_results import results, tools, tool_messages

PROXY = os.environ.get("TOOLWIRE_PROXY", "http://127.0.0.1:8083/v1")
API = os.environ.get("TOOLWIRE_API", "http://127.0.0.1:8081")


def main():
    client = openai.OpenAI(base_url=PROXY, api_key=os.environ.get("OPENAI_API_KEY", "recorded-upstream"))
    turn = "turn_" + uuid.uuid4().hex
    stream = client.chat.completions.create(
        model="gpt-5", stream=True, extra_headers={"X-Toolwire-Turn": turn},
        messages=[{"role": "user", "content": "Say first, second and third, with Bash."}], tools=tools(API, "openai"),
    )
    calls = {}
    for chunk in stream:
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            c = calls.setdefault(tc.index, {"id": tc.id, "name": "", "arguments": ""})
            c["name"] += tc.function.name or ""
            c["arguments"] += tc.function.arguments or ""
    for i in sorted(calls):
        print("model asked for", calls[i]["name"], calls[i]["arguments"], flush=True)
    done = list(results(API, turn))
    for r in done:
        print("result %d %s: %s" % (r["seq"], r["tool_use_id"], r["content"].strip()), flush=True)
    print(json.dumps(tool_messages(done), indent=2))


if __name__ == "__main__":
    main()
