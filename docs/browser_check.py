#!/usr/bin/env python3
"""browser_check.py -- open every page of the built site in headless
Chromium and fail on what a reader would see broken.

Usage:
    browser_check.py SITE_DIR SHOT_DIR

For each SITE_DIR/**/*.html, Chromium (Debian's `chromium`, run with
--headless --no-sandbox --disable-gpu) loads the page from disk, runs its
scripts and dumps the resulting DOM.  A page fails on:

  - a script error, or a file it could not load (an image, a style sheet,
    a script, a font): docs/template.html records them in the attribute
    data-page-errors of <html>, which the dump shows;
  - math that did not render: every <span class="math ..."> must hold a
    KaTeX rendering, and no .katex-error may appear;
  - a link or image to a local file that does not exist, or to an anchor
    (#id) that the target page does not have.  Links to the web are not
    fetched (the check runs offline); they are counted.

Then it saves screenshots of the first lesson page at desktop and phone
widths into SHOT_DIR (lesson-desktop.png, lesson-phone.png).
Exit status 1 if any page failed.
"""

import glob
import html.parser
import os
import re
import shutil
import subprocess
import sys
import urllib.parse

CHROME = ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
          '--mute-audio', '--no-first-run', '--disable-extensions']


def browser():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    sys.exit('docs-check: no chromium: run grader/install-deps.sh --check')


class Page(html.parser.HTMLParser):
    """Ids, links, images and math spans of one HTML document."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.images = set(), [], []
        self.math = self.katex = self.katex_errors = 0
        self.errors_attr = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a:
            self.ids.add(a['id'])
        if tag == 'a' and a.get('name'):
            self.ids.add(a['name'])
        if tag == 'html' and a.get('data-page-errors'):
            self.errors_attr = a['data-page-errors']
        classes = (a.get('class') or '').split()
        if tag == 'span' and 'math' in classes and ('inline' in classes or 'display' in classes):
            self.math += 1
        if 'katex' in classes:
            self.katex += 1
        if 'katex-error' in classes:
            self.katex_errors += 1
        if tag == 'a' and a.get('href'):
            self.links.append(a['href'])
        if tag in ('img', 'script') and a.get('src'):
            self.images.append(a['src'])
        if tag == 'link' and a.get('href'):
            self.links.append(a['href'])


def parse(text):
    p = Page()
    p.feed(text)
    return p


def dump_dom(chrome, path):
    r = subprocess.run([chrome] + CHROME + ['--virtual-time-budget=5000', '--dump-dom',
                                           'file://' + os.path.abspath(path)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not r.stdout.strip():
        return None, r.stderr.strip()[-2000:]
    return r.stdout, ''


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    site, shots = sys.argv[1], sys.argv[2]
    chrome = browser()
    pages = sorted(glob.glob(os.path.join(site, '**', '*.html'), recursive=True))
    if not pages:
        sys.exit(f'docs-check: no pages in {site}: run make docs first')
    static_ids = {}

    def ids_of(path):
        if path not in static_ids:
            with open(path, encoding='utf-8') as f:
                static_ids[path] = parse(f.read()).ids
        return static_ids[path]

    problems, external = [], set()
    for path in pages:
        rel = os.path.relpath(path, site)
        dom, err = dump_dom(chrome, path)
        if dom is None:
            problems.append(f'{rel}: chromium could not load the page: {err}')
            continue
        p = parse(dom)
        if p.errors_attr:
            for e in p.errors_attr.split(' | '):
                problems.append(f'{rel}: {e}')
        if p.katex_errors:
            problems.append(f'{rel}: {p.katex_errors} formula(s) KaTeX could not parse')
        if p.math != p.katex:
            problems.append(f'{rel}: {p.math} formulas, {p.katex} rendered by KaTeX')
        for url in p.links + p.images:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme in ('http', 'https', 'mailto'):
                external.add(url)
                continue
            if parts.scheme and parts.scheme != 'file':
                problems.append(f'{rel}: link with scheme {parts.scheme}: {url}')
                continue
            target = path if not parts.path else os.path.normpath(
                os.path.join(os.path.dirname(path), urllib.parse.unquote(parts.path)))
            if not os.path.exists(target):
                problems.append(f'{rel}: broken link: {url}')
            elif parts.fragment and target.endswith('.html'):
                frag = urllib.parse.unquote(parts.fragment)
                if frag not in ids_of(target):
                    problems.append(f'{rel}: link to a missing anchor: {url}')
        print(f'  checked {rel}: {len(p.links)} links, {len(p.images)} images/scripts, '
              f'{p.math} formulas')

    os.makedirs(shots, exist_ok=True)
    lessons = [p for p in pages if re.match(r'\d\d-', os.path.basename(p))]
    if lessons:
        for name, size in (('lesson-desktop.png', '1280,2600'), ('lesson-phone.png', '390,2200')):
            out = os.path.join(shots, name)
            subprocess.run([chrome] + CHROME + ['--virtual-time-budget=5000',
                           f'--window-size={size}', f'--screenshot={os.path.abspath(out)}',
                           'file://' + os.path.abspath(lessons[0])],
                           capture_output=True, text=True, timeout=120)
            if not os.path.exists(out):
                problems.append(f'could not save the screenshot {out}')
    for line in problems:
        print(f'docs-check: {line}', file=sys.stderr)
    print(f'docs-check: {len(pages)} pages, {len(external)} links to the web (not fetched), '
          f'{len(problems)} problem(s); screenshots in {shots}/')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
