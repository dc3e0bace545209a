#!/usr/bin/env python3
"""A merchant of the top-up service in Python, standard library only.

Signs a request, submits an order, polls it until it is final, and receives
and verifies the callback the service sends for it. Signing rules:
docs/signing.md.

Environment:
  TOPUP_BASE_URL     the service, e.g. http://127.0.0.1:8080
  TOPUP_API_KEY      your API key
  TOPUP_APP_SECRET   your app secret
  TOPUP_CALLBACK_URL your callback URL as the service has it, e.g.
                     http://127.0.0.1:3000/topup/callback; this program listens
                     on its port (the service must be allowed to call it:
                     CALLBACK_ALLOW_PRIVATE_NETWORKS=true for 127.0.0.1)
  TOPUP_SKU_ID       default demo-gems-100 (npm run demo creates it)
  TOPUP_ACCOUNT_ID   default 12345678 (the simulator delivers it)
  TOPUP_ACCOUNT_FIELDS  JSON object, default {"server_id":"2001"}
  TOPUP_WAIT_SECONDS how long to wait for the order to be final, default 60
"""
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit

TIMESTAMP_TOLERANCE_SECONDS = 300
NONCE_MEMORY_SECONDS = 600


def sign(app_secret: str, timestamp: str, nonce: str, path: str, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of timestamp, nonce, path and raw body, joined by line feeds."""
    message = f"{timestamp}\n{nonce}\n{path}\n".encode() + body
    return hmac.new(app_secret.encode(), message, hashlib.sha256).hexdigest()


def call(base_url: str, api_key: str, app_secret: str, path: str, payload: dict):
    """One signed POST; returns (HTTP status, parsed reply). Never raises for an HTTP error status."""
    body = json.dumps(payload, separators=(",", ":")).encode()  # serialise once, sign and send these bytes
    timestamp = str(int(time.time()))
    nonce = secrets.token_hex(16)
    request = urllib.request.Request(
        base_url + path,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "X-Api-Key": api_key,
            "X-Timestamp": timestamp,
            "X-Nonce": nonce,
            "X-Signature": sign(app_secret, timestamp, nonce, path, body),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class NonceMemory:
    """Nonces seen in the last 10 minutes (a replay cannot outlive the 300 s window either side)."""

    def __init__(self):
        self._until = {}
        self._lock = threading.Lock()

    def seen(self, nonce: str) -> bool:
        now = time.time()
        with self._lock:
            self._until = {n: t for n, t in self._until.items() if t > now}
            if nonce in self._until:
                return True
            self._until[nonce] = now + NONCE_MEMORY_SECONDS
            return False


def verify_callback(app_secret: str, path: str, headers, raw_body: bytes, nonces: NonceMemory, now=None):
    """Returns None when the callback is genuine, else the reason to refuse it."""
    values = {name: headers.get_all(name) or [] for name in ("X-Api-Key", "X-Timestamp", "X-Nonce", "X-Signature")}
    if any(len(v) != 1 for v in values.values()):
        return "MISSING_HEADER"
    timestamp, nonce, signature = values["X-Timestamp"][0], values["X-Nonce"][0], values["X-Signature"][0]
    now = time.time() if now is None else now
    if not timestamp.isdigit() or len(timestamp) > 15 or abs(now - int(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS:
        return "TIMESTAMP_EXPIRED"
    expected = sign(app_secret, timestamp, nonce, path, raw_body)
    if not hmac.compare_digest(expected, signature):  # constant time
        return "INVALID_SIGNATURE"
    if nonces.seen(nonce):  # only once the signature holds, so forgeries cannot fill the memory
        return "NONCE_REUSED"
    return None


REQUIRED = {
    "TOPUP_BASE_URL": "the service, e.g. http://127.0.0.1:8080",
    "TOPUP_API_KEY": "your API key (npm run demo prints one)",
    "TOPUP_APP_SECRET": "your app secret (npm run demo prints one)",
    "TOPUP_CALLBACK_URL": "the callback URL the service has for you, e.g. http://127.0.0.1:3000/topup/callback",
}


def environment_problems() -> list:
    """What is missing or malformed in the environment, one line each."""
    problems = [f"missing {name}: {what}" for name, what in REQUIRED.items() if not os.environ.get(name)]
    base_url = os.environ.get("TOPUP_BASE_URL")
    if base_url and not base_url.startswith(("http://", "https://")):
        problems.append(f"TOPUP_BASE_URL must start with http:// or https:// (got {base_url})")
    callback = os.environ.get("TOPUP_CALLBACK_URL")
    if callback:
        parts = urlsplit(callback)
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.scheme != "http" or not parts.hostname or port is None:
            problems.append(f"TOPUP_CALLBACK_URL must be http://host:port/path, with the port to listen on (got {callback})")
    try:
        if not isinstance(json.loads(os.environ.get("TOPUP_ACCOUNT_FIELDS", "{}")), dict):
            raise ValueError
    except ValueError:
        problems.append("TOPUP_ACCOUNT_FIELDS must be a JSON object, e.g. {\"server_id\":\"2001\"}")
    if not os.environ.get("TOPUP_WAIT_SECONDS", "60").isdigit():
        problems.append(f"TOPUP_WAIT_SECONDS must be a whole number of seconds (got {os.environ['TOPUP_WAIT_SECONDS']})")
    return problems


def main() -> int:
    problems = environment_problems()
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print("see examples/README.md", file=sys.stderr)
        return 2
    base_url = os.environ["TOPUP_BASE_URL"].rstrip("/")
    api_key = os.environ["TOPUP_API_KEY"]
    app_secret = os.environ["TOPUP_APP_SECRET"]
    callback_url = urlsplit(os.environ["TOPUP_CALLBACK_URL"])
    callback_path = callback_url.path  # sign over the path you configured, not what a proxy may pass on
    wait_seconds = int(os.environ.get("TOPUP_WAIT_SECONDS", "60"))

    callbacks = []
    arrived = threading.Event()
    nonces = NonceMemory()

    class CallbackHandler(BaseHTTPRequestHandler):
        def do_POST(self):
            raw_body = self.rfile.read(int(self.headers.get("Content-Length", "0")))  # the bytes as received
            refused = verify_callback(app_secret, callback_path, self.headers, raw_body, nonces)
            if self.path != callback_path or refused:
                print(f"callback refused: {refused or 'unknown path'}", flush=True)
                self.send_response(401)
                self.end_headers()
                return
            callbacks.append(json.loads(raw_body))  # apply it idempotently by order_no in a real shop
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"success")
            arrived.set()

        def log_message(self, *args):
            pass

    try:
        server = HTTPServer((callback_url.hostname, callback_url.port), CallbackHandler)
    except OSError as error:
        print(f"cannot listen for callbacks on {callback_url.hostname}:{callback_url.port} (TOPUP_CALLBACK_URL): {error.strerror}", file=sys.stderr)
        return 1
    threading.Thread(target=server.serve_forever, daemon=True).start()

    out_trade_no = f"py-{secrets.token_hex(6)}"
    order = {
        "out_trade_no": out_trade_no,
        "sku_id": os.environ.get("TOPUP_SKU_ID", "demo-gems-100"),
        "account_id": os.environ.get("TOPUP_ACCOUNT_ID", "12345678"),
        "account_fields": json.loads(os.environ.get("TOPUP_ACCOUNT_FIELDS", '{"server_id":"2001"}')),
    }
    try:
        status, reply = call(base_url, api_key, app_secret, "/api/v2/topup/submit", order)
    except urllib.error.URLError as error:
        print(f"cannot reach the service at {base_url} ({error.reason}): is it running, and is TOPUP_BASE_URL right?", file=sys.stderr)
        return 1
    print(f"submit: {status} {reply.get('code')}", flush=True)
    if not reply.get("success"):
        print(json.dumps(reply), file=sys.stderr)
        return 1
    order_no = reply["data"]["order_no"]

    print(f"waiting: up to {wait_seconds} s for {order_no} to be final (success or failed), asking every 0.5 s", flush=True)
    started = time.time()
    next_note = started + 10
    while True:
        status, reply = call(base_url, api_key, app_secret, "/api/v2/topup/query", {"order_no": order_no})
        state = reply.get("data", {}).get("status") if reply.get("success") else None
        if state in ("success", "failed") or time.time() - started >= wait_seconds:
            break
        if time.time() >= next_note:
            print(f"waiting: {order_no} still {state} after {int(time.time() - started)} s", flush=True)
            next_note += 10
        time.sleep(0.5)
    print(f"query: {order_no} {state}", flush=True)
    if state not in ("success", "failed"):
        print(
            f"gave up: {order_no} still {state} after {wait_seconds} s "
            "(an account ending in 999 is never answered upstream: reconciliation staff settle it)",
            file=sys.stderr,
        )
        return 1

    print(f"waiting: up to 30 s for the callback for {order_no} at {callback_url.geturl()}", flush=True)
    if not arrived.wait(30):
        print(f"no callback for {order_no} within 30 s", file=sys.stderr)
        return 1
    callback = next((c for c in callbacks if c.get("order_no") == order_no), None)
    if callback is None:
        return 1
    print(f"callback: verified {callback['order_no']} {callback['status']}", flush=True)
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
