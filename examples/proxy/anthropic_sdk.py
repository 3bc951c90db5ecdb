#!/usr/bin/env python3
"""The official Anthropic SDK with toolwire: the base URL points at `toolwire proxy`.

The SDK streams the model's response as usual; the proxy passes it through
byte for byte and starts each tool call the moment its block is complete. The
results come in call order from toolwire's HTTP API and go back to the model
as the next user turn. Needs `pip install anthropic`.

    toolwire serve &
    python3 recorded_upstream.py --port 9000 --stream anthropic.sse &   # or the real API
    toolwire proxy --listen 127.0.0.1:8082 --upstream http://127.0.0.1:9000 --format anthropic &
    python3 anthropic_sdk.py
"""
import json
import os
import uuid

import anthropic

from toolwire_results import results, tools, tool_result_message

PROXY = os.environ.get("TOOLWIRE_PROXY", "http://127.0.0.1:8082")
API = os.environ.get("TOOLWIRE_API", "http://127.0.0.1:8081")


def main():
    client = anthropic.Anthropic(base_url=PROXY, api_key=os.environ.get("ANTHROPIC_API_KEY", "recorded-upstream"))
    turn = "turn_" + uuid.uuid4().hex  # the proxy publishes the calls under this turn
    messages = [{"role": "user", "content": "Say first, second and third, with Bash."}]
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools(API, "anthropic"),
        extra_headers={"X-Toolwire-Turn": turn},
    ) as stream:
        for event in stream:
            if event.type == "content_block_stop" and event.content_block.type == "tool_use":
                print("model asked for", event.content_block.name, json.dumps(event.content_block.input), flush=True)
        reply = stream.get_final_message()
    # Already running since their blocks closed: read them in call order.
    done = list(results(API, turn))
    for r in done:
        print("result %d %s: %s" % (r["seq"], r["tool_use_id"], r["content"].strip()), flush=True)
    messages += [{"role": "assistant", "content": [b.model_dump() for b in reply.content]}, tool_result_message(done)]
    print(json.dumps(messages[-1], indent=2))


if __name__ == "__main__":
    main()
