#!/usr/bin/env python3
"""One turn of an agent loop against toolwire's HTTP API, standard library only.

The model's response stream (here a recorded one, stream.sse) is uploaded to
toolwire as it arrives, so each tool call starts running while the model is
still writing the next. The results are read as server-sent events, in call
order, and become the next request's tool_result message.

    toolwire serve &                 # the API listens on 127.0.0.1:8081
    python3 examples/python/agent.py [--api URL] [--stream FILE] [--format anthropic]

With API tokens configured, set TOOLWIRE_TOKEN to the tenant's token.
It prints each result as it comes, then the tool_result message as JSON.
"""
import argparse
import http.client
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


def headers(token, **extra):
    h = dict(extra)
    if token:
        h["Authorization"] = "Bearer " + token
    return h


def model_stream(path, pace):
    """Yields the recorded stream event by event, as a model API sends it."""
    with open(path, "rb") as f:
        event = b""
        for line in f:
            event += line
            if line in (b"\n", b"\r\n"):
                yield event
                event = b""
                time.sleep(pace)
        if event:
            yield event


def submit(api, token, turn, fmt, path, pace):
    """Uploads the stream chunked: the body is sent as it is read."""
    req = urllib.request.Request(
        "%s/v1/turns/%s/stream?format=%s" % (api, turn, fmt),
        data=model_stream(path, pace),  # an iterable body goes out chunked
        method="POST",
        headers=headers(token, **{"Content-Type": "text/event-stream"}),
    )
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def read_results(api, token, turn, out):
    """Reads the turn's results in call order; reconnects with Last-Event-ID
    if the connection drops, so no result is missed or read twice."""
    last_id = None
    while True:
        h = headers(token, Accept="text/event-stream")
        if last_id is not None:
            h["Last-Event-ID"] = last_id
        req = urllib.request.Request("%s/v1/turns/%s/results" % (api, turn), headers=h)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                event, data, ev_id = None, [], None
                for raw in resp:
                    line = raw.decode("utf-8").rstrip("\r\n")
                    if line.startswith(":"):
                        continue  # a heartbeat
                    if line == "":
                        if event == "result":
                            result = json.loads("\n".join(data))
                            out["results"].append(result)
                            last_id = ev_id
                            print("result %d %s: %s" % (result["seq"], result["tool_use_id"],
                                                        result["content"].strip()), flush=True)
                        elif event == "done":
                            out["done"] = json.loads("\n".join(data))
                            return
                        event, data, ev_id = None, [], None
                        continue
                    field, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "event":
                        event = value
                    elif field == "data":
                        data.append(value)
                    elif field == "id":
                        ev_id = value
        except urllib.error.HTTPError:
            raise  # a refusal (a bad token, say) is not fixed by asking again
        except (urllib.error.URLError, http.client.HTTPException, OSError):
            # The connection dropped (the server restarted, or closed a
            # reader too slow): come back where we were.
            time.sleep(0.5)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--api", default="http://127.0.0.1:8081")
    p.add_argument("--stream", default=os.path.join(HERE, "stream.sse"))
    p.add_argument("--format", default="anthropic")
    p.add_argument("--pace", type=float, default=0.01, help="seconds between stream events")
    args = p.parse_args()
    token = os.environ.get("TOOLWIRE_TOKEN", "")
    turn = "turn_py_" + uuid.uuid4().hex

    out = {"results": [], "done": None}
    reader = threading.Thread(target=read_results, args=(args.api, token, turn, out), daemon=True)
    reader.start()  # may start before the turn exists: results wait for it
    try:
        summary = submit(args.api, token, turn, args.format, args.stream, args.pace)
    except urllib.error.HTTPError as e:
        problem = json.load(e)
        sys.exit("toolwire refused the stream: %s" % problem.get("detail"))
    reader.join(timeout=120)
    if out["done"] is None:
        sys.exit("the turn did not complete")
    if summary["calls"] != len(out["results"]):
        sys.exit("%d calls, %d results" % (summary["calls"], len(out["results"])))

    # The next request to the model carries the results in call order.
    message = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": r["tool_use_id"], "content": r["content"],
         "is_error": r["is_error"]} for r in out["results"]]}
    print(json.dumps(message, indent=2))


if __name__ == "__main__":
    main()
