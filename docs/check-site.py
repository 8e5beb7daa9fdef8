#!/usr/bin/env python3
"""check-site.py SITE OUT - checks the documentation site docfx wrote into SITE.

1. Every link and resource of every page resolves: a relative href/src names a file of the
   site, and an #anchor on a page of the site names an id on that page; every entry of the
   navigation (the toc.json files) names a page; every cross reference of the API pages
   resolved to a link.
2. Every relative link of the repository's README.md names a file of the repository, and an
   #anchor into a Markdown file names one of its headings (as GitHub makes them ids).
3. Headless Chromium renders the guide's first page and the Communicator API page: the
   rendered DOM holds their titles and (for Communicator) the members users call first, and
   a screenshot of the Communicator page is written to OUT/communicator.png.
Exits 1 with every problem listed, 0 when the site is whole.
"""
import html
import html.parser
import json
import os
import re
import subprocess
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "link", "script", "img"):
                self.links.append(a[key])


def parse(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page


def check_links(site):
    problems, pages = [], {}
    for root, _, files in os.walk(site):
        for name in files:
            if name.endswith(".html"):
                pages[os.path.join(root, name)] = None
    for path in pages:
        pages[path] = parse(path)
    for path, page in pages.items():
        for link in page.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(url.path))) if url.path else path
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            if not os.path.exists(target):
                problems.append(f"{os.path.relpath(path, site)}: broken link {link}")
            elif url.fragment and target in pages and url.fragment not in pages[target].ids:
                problems.append(f"{os.path.relpath(path, site)}: no #{url.fragment} in {os.path.relpath(target, site)}")
    problems += check_tocs(site)
    problems += check_crefs(site)
    return problems, len(pages)


def check_crefs(site):
    """A cref docfx could not resolve is shown as plain text naming its documentation id
    (System.MP.FileOffset.Bytes(System.Int64)) instead of a link: none may be left."""
    problems = []
    api = os.path.join(site, "api")
    for name in sorted(os.listdir(api)) if os.path.isdir(api) else []:
        if name.endswith(".html"):
            with open(os.path.join(api, name), encoding="utf-8") as f:
                unresolved = sorted(set(re.findall(r'<span class="xref">([^<]*\.[^<]*)</span>', f.read())))
            problems += [f"api/{name}: unresolved cross reference {html.unescape(u)}" for u in unresolved]
    return problems


def check_tocs(site):
    """The navigation bars are drawn by script from toc.json: every entry must name a page."""
    problems = []

    def walk(items, toc):
        for item in items:
            for key in ("href", "topicHref", "tocHref"):
                link = item.get(key)
                if not link or urllib.parse.urlsplit(link).scheme:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(toc), urllib.parse.unquote(urllib.parse.urlsplit(link).path)))
                if not os.path.isfile(target):
                    problems.append(f"{os.path.relpath(toc, site)}: entry \"{item.get('name')}\" names no page: {link}")
            walk(item.get("items", []), toc)

    for root, _, files in os.walk(site):
        if "toc.json" in files:
            toc = os.path.join(root, "toc.json")
            with open(toc, encoding="utf-8") as f:
                walk(json.load(f).get("items", []), toc)
    return problems


def slug(heading):
    """The id GitHub gives a Markdown heading."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path):
    ids, fenced = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,6} ", line):
                ids.add(slug(line.lstrip("#")))
    return ids


def check_readme(readme):
    problems, fenced, count = [], False, 0
    base = os.path.dirname(readme)
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        for link in re.findall(r"\]\(([^)\s]+)\)", line):
            url = urllib.parse.urlsplit(link)
            if url.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue
            count += 1
            target = os.path.normpath(os.path.join(base, urllib.parse.unquote(url.path))) if url.path else readme
            where = f"README.md:{number}"
            if not os.path.exists(target):
                problems.append(f"{where}: broken link {link}")
            elif url.fragment and target.endswith(".md") and url.fragment not in headings(target):
                problems.append(f"{where}: no heading #{url.fragment} in {os.path.relpath(target, base)}")
    return problems, count


def chromium(args):
    return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--virtual-time-budget=5000", *args],
                          capture_output=True, text=True, timeout=120)


def check_rendering(site, out):
    problems = []
    expectations = {
        "guide/index.html": ["The Motor guide", "Point-to-point"],
        "api/System.MP.Communicator.html": ["Class Communicator", "Allreduce", "Send", "ORecv"],
    }
    for page, words in expectations.items():
        url = "file://" + os.path.abspath(os.path.join(site, page))
        dom = chromium(["--dump-dom", url])
        if dom.returncode != 0:
            problems.append(f"{page}: chromium failed: {dom.stderr.strip()[-300:]}")
            continue
        for word in words:
            if word not in dom.stdout:
                problems.append(f"{page}: the rendered page lacks \"{word}\"")
    shot = os.path.join(out, "communicator.png")
    url = "file://" + os.path.abspath(os.path.join(site, "api/System.MP.Communicator.html"))
    run = chromium([f"--screenshot={shot}", "--window-size=1280,1600", url])
    if run.returncode != 0 or not os.path.exists(shot) or os.path.getsize(shot) < 10000:
        problems.append(f"no screenshot of the Communicator page: {run.stderr.strip()[-300:]}")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-site.py SITE OUT")
    site, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    problems, count = check_links(site)
    readme_problems, readme_links = check_readme(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md"))
    problems += readme_problems
    problems += check_rendering(site, out)
    for p in problems:
        print(p)
    print(f"check-site: {count} pages, {readme_links} links of README.md, {len(problems)} problems; screenshot {os.path.join(out, 'communicator.png')}")
    sys.exit(1 if problems else 0)


main()
