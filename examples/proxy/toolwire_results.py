"""Reads a turn's results from toolwire's HTTP API, in call order (stdlib only)."""
import json
import os
import urllib.request


def _headers(token, **extra):
    token = token or os.environ.get("TOOLWIRE_TOKEN", "")
    if token:
        extra["Authorization"] = "Bearer " + token
    return extra


def tools(api, fmt, token=None):
    """The tools list exactly as toolwire offers it (anthropic or openai format):
    the same bytes every time, so the model API's prompt cache stays warm."""
    req = urllib.request.Request("%s/v1/tools?format=%s" % (api, fmt), headers=_headers(token))
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def results(api, turn, token=None):
    """Yields each result of the turn as a dict, in call order, until done."""
    req = urllib.request.Request("%s/v1/turns/%s/results" % (api, turn), headers=_headers(token, Accept="text/event-stream"))
    with urllib.request.urlopen(req, timeout=120) as resp:
        event, data = None, []
        for raw in resp:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith(":"):
                continue  # a heartbeat
            if line == "":
                if event == "result":
                    yield json.loads("\n".join(data))
                elif event == "done":
                    return
                event, data = None, []
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))


def tool_result_message(results_in_order):
    """The Anthropic Messages user turn that carries the results back."""
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": r["tool_use_id"], "content": r["content"], "is_error": r["is_error"]}
        for r in results_in_order]}


def tool_messages(results_in_order):
    """The OpenAI Chat Completions tool messages that carry the results back."""
    return [{"role": "tool", "tool_call_id": r["tool_use_id"], "content": r["content"]} for r in results_in_order]
