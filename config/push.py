"""The push server: the live pages' WebSockets (``/ws/``) of ``config.asgi``, served by uvicorn.

``python -m config.push --port 8101`` is how a site runs its push processes (docs/deployment.md);
the options that matter for a venue are decided here once, from ``bench/fanout.py``'s figures
(docs/performance.md, "Live pages at a venue"):

- uvicorn with websockets' sans-I/O protocol: an asyncio transport writes a frame at once, where
  daphne's Twisted transport registers and unregisters each socket with the selector per frame;
- no per-message deflate: a result's frame is a few hundred bytes, and compressing it again for
  every socket cost the push a fifth of its CPU to save a few hundred bytes a screen.

The development server (``manage.py runserver``) stays daphne's: it serves pages and sockets in
one process, which is what a laptop wants.
"""

from __future__ import annotations

import argparse
import os

APPLICATION = "config.asgi:application"


def options(host: str, port: int, *, proxied: bool) -> dict[str, object]:
    """uvicorn's keyword arguments for a push process (the tests start it with these too)."""
    return {
        "host": host,
        "port": port,
        "ws": "websockets-sansio",
        "ws_per_message_deflate": False,
        "lifespan": "off",  # Django's ASGI handler has no lifespan events
        "log_level": os.environ.get("LOG_LEVEL", "warning").lower(),
        "access_log": False,
        # behind the proxy of docs/deployment.md, the client's address comes from X-Forwarded-For
        "proxy_headers": proxied,
        "forwarded_allow_ips": "127.0.0.1" if proxied else None,
        "backlog": 4096,
        # a deploy's SIGTERM closes every socket with 1012 (the pages reconnect, jittered); the
        # consumers that do not end by then are cancelled rather than hold the restart up
        "timeout_graceful_shutdown": 3,
    }


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(
        prog="python -m config.push", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument(
        "--no-proxy",
        action="store_true",
        help="clients connect directly: ignore X-Forwarded-For",
    )
    args = parser.parse_args(argv)
    uvicorn.run(APPLICATION, **options(args.host, args.port, proxied=not args.no_proxy))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
