"""The page works offline: every request it makes on load goes to the app, nothing is refused (no
401 in the console), and its metadata names brainchat with brainchat's own picture.

Chainlit's page asked Google Fonts and jsDelivr (KaTeX) on every load, named Chainlit in og:image
and og:url, and its first GET /user answered 401 in local mode (logged as two console errors).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from brainchat.testing.scripted_server import Text
from conftest import ROOT, WAIT_MS, send, spec

pytestmark = pytest.mark.browser
ANSWER = "Alpha is 8-12 Hz."


@pytest.fixture(scope="module")
def app(model_server, app_factory):
    return app_factory({"CHAT_MODEL": spec(model_server, "chat-m")})


def watched_page(browser: Any, url: str) -> tuple[Any, dict[str, list[Any]]]:
    """A page on the app that records every request, failed response and console message."""
    seen: dict[str, list[Any]] = {"requests": [], "failed": [], "console": []}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.on("request", lambda r: seen["requests"].append(r.url))
    context.on("requestfailed", lambda r: seen["failed"].append((r.url, r.failure)))
    context.on("response", lambda r: r.status >= 400 and seen["failed"].append((r.url, r.status)))
    context.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text} {m.location}"))
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(url)
    page.wait_for_selector("text=/brainchat is (ready|not ready)/")  # the session has started
    return page, seen


def test_a_page_load_and_a_chat_turn_request_only_the_apps_own_origin(app, browser, model_server):
    model_server.queue("chat-m", Text(ANSWER))
    page, seen = watched_page(browser, app)
    send(page, "What is alpha?")
    page.wait_for_selector(f"text={ANSWER}")
    families = page.evaluate(
        "document.fonts.ready.then(() => [...document.fonts]"
        ".filter(f => f.status === 'loaded').map(f => f.family))"
    )
    katex = page.evaluate(
        "[...document.styleSheets].filter(s => (s.href || '').endsWith('/katex.min.css'))"
        ".map(s => { try { return [s.href, s.cssRules.length] } catch (e) { return [s.href, -1] } })"
    )
    page.context.close()

    origin = urlsplit(app)
    elsewhere = [
        u for u in seen["requests"]
        if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u)[:2] != origin[:2]
    ]  # fmt: skip
    assert elsewhere == [], elsewhere
    assert f"{app}/public/fonts/inter.css" in seen["requests"]
    assert any(u.startswith(f"{app}/public/fonts/inter-latin-wght") for u in seen["requests"])
    assert "Inter" in families  # the UI's font, from the app (Chainlit's CSS asks for "Inter")
    assert katex and katex[0][0] == f"{app}/public/katex/katex.min.css" and katex[0][1] > 100
    assert seen["failed"] == []  # no 401 (GET /user), no 404, nothing blocked
    errors = [c for c in seen["console"] if c.startswith("error")]
    assert errors == [], errors


def test_katex_fonts_the_stylesheet_names_are_served_by_the_app(app):
    css = httpx.get(f"{app}/public/katex/katex.min.css").text
    fonts = sorted(set(re.findall(r"url\((fonts/[^)]+)\)", css)))
    assert len(fonts) == 20 and all(f.endswith(".woff2") for f in fonts)
    for font in fonts:
        served = httpx.get(f"{app}/public/katex/{font}")
        assert served.status_code == 200 and served.content[:4] == b"wOF2", font


def test_the_pages_metadata_names_brainchat_with_its_own_picture(app, browser):
    page, _ = watched_page(browser, f"{app}/")
    meta = page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('meta[property], meta[name]')]"
        ".map(m => [m.getAttribute('property') || m.name, m.content]))"
    )
    icon = page.get_attribute("link[rel=icon]", "href")
    page.context.close()
    assert meta["og:title"] == "brainchat" and meta["og:site_name"] == "brainchat"
    assert meta["og:url"] == f"{app}/"
    assert meta["og:image"] == f"{app}/public/brainchat.png"
    assert meta["og:description"].startswith("A conversational workbench for EEG research")
    assert not [v for v in meta.values() if "chainlit" in v.lower()], meta
    image = httpx.get(meta["og:image"])
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    assert image.content == (ROOT / "public" / "brainchat.png").read_bytes()
    favicon = httpx.get(f"{app}{icon}")
    assert favicon.content == Path(ROOT / "public" / "favicon.svg").read_bytes()
    for theme in ("light", "dark"):
        logo = httpx.get(f"{app}/logo", params={"theme": theme})
        assert logo.content == (ROOT / "public" / f"logo_{theme}.svg").read_bytes()


def test_get_user_logs_the_local_user_in_but_never_a_proxied_request(app):
    with httpx.Client(base_url=app, timeout=10) as http:
        first = http.get("/user")
        assert first.status_code == 200 and first.json()["identifier"] == "local"
        assert "access_token" in first.cookies
        again = http.get("/user")  # with the cookie it was given
        assert again.status_code == 200 and again.json()["identifier"] == "local"
    proxied = httpx.get(f"{app}/user", headers={"X-Forwarded-For": "203.0.113.9"})
    assert proxied.status_code == 401 and "access_token" not in proxied.cookies
