"""Escapes user text for HTML and strips tags from a snippet."""
import html
import re

comments = ['I <3 this & that', '<b>bold</b> "quoted"', "it's fine"]
for c in comments:
    print(f"<li>{html.escape(c)}</li>")
snippet = "<p>Hello <em>world</em> &amp; friends</p>"
print(html.unescape(re.sub(r"<[^>]+>", "", snippet)))
