"""Capture the requests that the providers' official Python SDKs send for media parts.

Each SDK is pointed at a loopback HTTP server (127.0.0.1, a free port) that records the
request and answers with a minimal well-formed response of that provider, so the SDK
call returns without error. One JSON file is written per SDK call; see README.md beside
this script for what each file shows.

Versions used for the committed fixtures (pin them to regenerate byte-identical files):

    python3 -m venv /tmp/sdkvenv
    /tmp/sdkvenv/bin/pip install openai==3.63.0 anthropic==2.17.0 google-genai==3.6.1
    /tmp/sdkvenv/bin/python tests/providers/media_sdk/capture.py [OUTDIR]

OUTDIR defaults to the folder of this script. The captures were made with Python 3.11.

No network is used: every client gets a loopback base URL, retries are off, and the API
key is the dummy "sk-test", which is never written out (the `authorization`,
`x-api-key` and `x-goog-api-key` headers and any `key` query parameter are dropped).

The media are made here, deterministic and tiny: a 2x2 RGB PNG, a one-page PDF, 0.1 s of
8 kHz mono 16-bit silence as WAV, and a short plain text.
"""

import base64
import json
import os
import platform
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version as dist_version
from urllib.parse import parse_qsl, urlsplit

PINNED = {"openai": "3.63.0", "anthropic": "2.17.0", "google-genai": "3.6.1"}

# Headers kept in a fixture: the ones that carry protocol meaning. The others
# (user agent, x-stainless-os/arch/runtime, content-length, host, ...) depend on the
# machine, the Python build or the port and would make the files differ per machine.
KEPT_HEADERS = {"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta"}
SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "api-key"}
SECRET_QUERY = {"key", "api_key"}


# --------------------------------------------------------------------------- media


def make_png() -> bytes:
    """A 2x2 RGB PNG: red, green / blue, white."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    rows = [
        b"\x00" + bytes([255, 0, 0, 0, 255, 0]),
        b"\x00" + bytes([0, 0, 255, 255, 255, 255]),
    ]
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def make_pdf() -> bytes:
    """A minimal valid one-page PDF saying "Total: 42" with a correct xref table."""
    stream = b"BT /F1 12 Tf 10 20 Td (Total: 42) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 40] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += str(i).encode() + b" 0 obj\n" + obj + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 " + str(len(objects) + 1).encode() + b"\n0000000000 65535 f \n"
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += (
        b"trailer\n<< /Size " + str(len(objects) + 1).encode() + b" /Root 1 0 R >>\n"
        b"startxref\n" + str(xref_at).encode() + b"\n%%EOF\n"
    )
    return out


def make_wav() -> bytes:
    """0.1 s of silence, 8 kHz mono 16-bit PCM (800 samples, 1644 bytes)."""
    rate, channels, bits = 8000, 1, 16
    data = b"\x00\x00" * (rate // 10)
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * bits // 8, channels * bits // 8, bits)
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data))
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )


TEXT_DOC = "Receipt\nCoffee 3.50\nCake 4.00\nTotal 7.50\n"

PNG = make_png()
PDF = make_pdf()
WAV = make_wav()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# --------------------------------------------------------------------------- server

OPENAI_CHAT_REPLY = {
    "id": "chatcmpl-test",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "ok", "refusal": None},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}

OPENAI_RESPONSES_REPLY = {
    "id": "resp_test",
    "object": "response",
    "created_at": 0,
    "status": "completed",
    "model": "gpt-4o",
    "output": [
        {
            "type": "message",
            "id": "msg_test",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    },
}

ANTHROPIC_REPLY = {
    "id": "msg_test",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}

GEMINI_REPLY = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}
    ],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    "modelVersion": "gemini-2.5-flash",
}


def reply_for(path: str) -> dict:
    if path.endswith("/chat/completions"):
        return OPENAI_CHAT_REPLY
    if path.endswith("/responses"):
        return OPENAI_RESPONSES_REPLY
    if path.endswith("/messages"):
        return ANTHROPIC_REPLY
    if ":generateContent" in path:
        return GEMINI_REPLY
    raise ValueError(f"no canned reply for {path}")


CAPTURED: list = []


class Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep stdout quiet
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        url = urlsplit(self.path)
        query = [(k, v) for k, v in parse_qsl(url.query, keep_blank_values=True) if k.lower() not in SECRET_QUERY]
        secrets = ["query " + k for k, _ in parse_qsl(url.query) if k.lower() in SECRET_QUERY]
        headers = {}
        for name, value in self.headers.items():
            lname = name.lower()
            if lname in SECRET_HEADERS:
                secrets.append("header " + lname)
                continue
            if lname in KEPT_HEADERS:
                headers[lname] = value
        CAPTURED.append(
            {
                "method": self.command,
                "path": url.path,
                "query": dict(query),
                "headers": dict(sorted(headers.items())),
                "credentials_in": sorted(secrets),
                "body": json.loads(raw.decode("utf-8")),
            }
        )
        try:
            out = json.dumps(reply_for(url.path)).encode()
            self.send_response(200)
        except ValueError as err:
            out = json.dumps({"error": {"message": str(err)}}).encode()
            self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


# --------------------------------------------------------------------------- calls


def openai_calls(base: str):
    import openai

    client = openai.OpenAI(api_key="sk-test", base_url=base + "/v1", max_retries=0)
    png_url = "data:image/png;base64," + b64(PNG)
    pdf_url = "data:application/pdf;base64," + b64(PDF)

    def chat_image():
        client.chat.completions.create(
            model="gpt-4o",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Describe the image."},
                        {"type": "image_url", "image_url": {"url": png_url, "detail": "low"}},
                    ],
                }
            ],
        )

    def chat_audio():
        client.chat.completions.create(
            model="gpt-4o-audio-preview",
            modalities=["text"],
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Transcribe the audio."},
                        {"type": "input_audio", "input_audio": {"data": b64(WAV), "format": "wav"}},
                    ],
                }
            ],
        )

    def chat_pdf():
        client.chat.completions.create(
            model="gpt-4o",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Summarise the document."},
                        {"type": "file", "file": {"filename": "receipt.pdf", "file_data": pdf_url}},
                    ],
                }
            ],
        )

    def responses_image():
        client.responses.create(
            model="gpt-4o",
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "Describe the image."},
                        {"type": "input_image", "image_url": png_url, "detail": "low"},
                    ],
                }
            ],
        )

    def responses_pdf():
        client.responses.create(
            model="gpt-4o",
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "Summarise the document."},
                        {"type": "input_file", "filename": "receipt.pdf", "file_data": pdf_url},
                    ],
                }
            ],
        )

    return "openai", "openai", [
        ("openai_chat_image", chat_image),
        ("openai_chat_audio", chat_audio),
        ("openai_chat_pdf", chat_pdf),
        ("openai_responses_image", responses_image),
        ("openai_responses_pdf", responses_pdf),
    ]


def anthropic_calls(base: str):
    import anthropic

    client = anthropic.Anthropic(api_key="sk-test", base_url=base, max_retries=0)

    def send(name_text, block):
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": [block, {"type": "text", "text": name_text}]}],
        )

    def image():
        send(
            "Describe the image.",
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}},
        )

    def pdf():
        send(
            "Summarise the document.",
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)},
                "title": "receipt.pdf",
            },
        )

    def text_document():
        send(
            "Summarise the document.",
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": TEXT_DOC},
                "title": "receipt.txt",
            },
        )

    return "anthropic", "anthropic", [
        ("anthropic_image", image),
        ("anthropic_pdf", pdf),
        ("anthropic_text_document", text_document),
    ]


def gemini_calls(base: str):
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key="sk-test",
        http_options=types.HttpOptions(
            base_url=base,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )

    def send(prompt, part):
        client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[types.Content(role="user", parts=[types.Part.from_text(text=prompt), part])],
        )

    def image():
        send("Describe the image.", types.Part.from_bytes(data=PNG, mime_type="image/png"))

    def pdf():
        send("Summarise the document.", types.Part.from_bytes(data=PDF, mime_type="application/pdf"))

    def audio():
        send("Transcribe the audio.", types.Part.from_bytes(data=WAV, mime_type="audio/wav"))

    def image_dict_snake_case():
        # The same image given as a plain dict in the REST docs' snake_case spelling,
        # to show what the SDK turns it into on the wire.
        client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[
                {
                    "role": "user",
                    "parts": [
                        {"text": "Describe the image."},
                        {"inline_data": {"mime_type": "image/png", "data": PNG}},
                    ],
                }
            ],
        )

    return "google-genai", "google-genai", [
        ("gemini_image", image),
        ("gemini_pdf", pdf),
        ("gemini_audio", audio),
        ("gemini_image_dict_snake_case", image_dict_snake_case),
    ]


# --------------------------------------------------------------------------- main


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(outdir, exist_ok=True)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    py = ".".join(platform.python_version_tuple()[:2])

    mismatched = []
    written = 0
    try:
        for make in (openai_calls, anthropic_calls, gemini_calls):
            sdk, dist, calls = make(base)
            ver = dist_version(dist)
            if ver != PINNED[dist]:
                mismatched.append(f"{dist} {ver} (pinned {PINNED[dist]})")
            for name, call in calls:
                before = len(CAPTURED)
                call()
                if len(CAPTURED) != before + 1:
                    raise SystemExit(f"{name}: expected one request, got {len(CAPTURED) - before}")
                req = CAPTURED[-1]
                fixture = {
                    "sdk": sdk,
                    "sdk_version": ver,
                    "python": py,
                    "method": req["method"],
                    "path": req["path"],
                    "query": req["query"],
                    "headers": req["headers"],
                    "credentials_in": req["credentials_in"],
                    "body": req["body"],
                }
                text = json.dumps(fixture, indent=2, ensure_ascii=False) + "\n"
                if "sk-test" in text:
                    raise SystemExit(f"{name}: the dummy key leaked into the fixture")
                with open(os.path.join(outdir, name + ".json"), "w", encoding="utf-8", newline="\n") as f:
                    f.write(text)
                written += 1
                print(f"wrote {name}.json")
    finally:
        server.shutdown()

    print(f"{written} fixtures in {outdir}")
    if mismatched:
        print("warning: SDK versions differ from the pins: " + ", ".join(mismatched), file=sys.stderr)


if __name__ == "__main__":
    main()
