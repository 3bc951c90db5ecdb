#!/usr/bin/env python3
"""What the SDK examples do, with the standard library only: POST a model
request through `toolwire proxy`, read the streamed response as it comes, then
the results in call order from toolwire's HTTP API.

    python3 stdlib_client.py --proxy http://127.0.0.1:8082/v1/messages [--api URL]
"""
import argparse
import json
import urllib.request
import uuid

from toolwire_results import results


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--proxy", required=True, help="the model API endpoint, through the proxy")
    p.add_argument("--api", default="http://127.0.0.1:8081")
    args = p.parse_args()
    turn = "turn_" + uuid.uuid4().hex
    body = json.dumps({"model": "any", "max_tokens": 1024, "stream": True,
                       "messages": [{"role": "user", "content": "Say first, second and third, with Bash."}]}).encode()
    req = urllib.request.Request(args.proxy, data=body, method="POST", headers={
        "Content-Type": "application/json", "X-Toolwire-Turn": turn})
    with urllib.request.urlopen(req) as resp:
        streamed = sum(len(chunk) for chunk in resp)  # what the SDK would parse
    print("streamed %d bytes through the proxy as turn %s" % (streamed, resp.headers["X-Toolwire-Turn"]), flush=True)
    for r in results(args.api, turn):
        print("result %d %s: %s" % (r["seq"], r["tool_use_id"], r["content"].strip()), flush=True)


if __name__ == "__main__":
    main()
