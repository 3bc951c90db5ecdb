#!/usr/bin/env python3
"""A stand-in for a model API that answers every POST with a recorded stream.

It lets the SDK examples run without an API key: `toolwire proxy --upstream`
points at it, and each request gets the recorded response stream, sent event
by event at a model's pace, as text/event-stream.

    python3 recorded_upstream.py --port 9000 --stream anthropic.sse
"""
import argparse
import http.server
import time


def handler(stream, pace):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)  # the request (model, messages, tools) is not looked at
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for event in stream.split(b"\n\n"):
                if event.strip():
                    self.wfile.write(event + b"\n\n")
                    self.wfile.flush()
                    time.sleep(pace)

        def log_message(self, *args):
            pass

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=9000)
    p.add_argument("--stream", required=True)
    p.add_argument("--pace", type=float, default=0.01, help="seconds between events")
    args = p.parse_args()
    with open(args.stream, "rb") as f:
        stream = f.read()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler(stream, args.pace))
    print("recorded upstream on http://127.0.0.1:%d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
