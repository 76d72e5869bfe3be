#!/usr/bin/env python3
"""epub.py -- the web book as one EPUB 3 file, for reading offline
(make epub runs it; make docs copies the result into the site).

Usage:
    epub.py --site DIR --out BOOK.epub

Run from the repository root, after docs/site.py has built the student
edition into DIR (its figures, in DIR/figures, go into the book).  The
chapters are the pages of the site, in its order: the contents page, the
lessons, the guides.  Each page goes through the site's own filter
(docs/filters/include.lua: the tagged code from the real sources) and then
docs/filters/epub.lua (one chapter: its anchors made unique, links between
pages made links between chapters, links to source pages dropped); the
chapters are joined and written by pandoc with math as MathML.  A pandoc
warning is an error, as for the site.  `epubcheck` (make check) validates
the result.
"""

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess

# docs/site.py (the site's pages and metadata), by path: `site` is also the
# name of a module of Python's own.
_spec = importlib.util.spec_from_file_location(
    'docs_site', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'site.py'))
web = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(web)


def pandoc(args, what, stdin=None):
    r = subprocess.run(['pandoc'] + args, capture_output=True, text=True, input=stdin)
    if r.returncode != 0 or r.stderr.strip():
        web.die(f'pandoc failed on {what}:\n{r.stderr.strip()}')
    return r.stdout


def unique_ids(svg):
    """SVG text with every repeated id="X" renamed X-2, X-3...: gnuplot's svg
    terminal draws an opaque key's entries twice, ids and all, which an
    EPUB (XML, where an id is unique) refuses.  Nothing refers to them."""
    seen = {}

    def rename(m):
        n = seen[m.group(1)] = seen.get(m.group(1), 0) + 1
        return m.group(0) if n == 1 else f'id="{m.group(1)}-{n}"'
    return re.sub(r'\bid="([^"]+)"', rename, svg)


def copy_figures(site, build):
    """The site's figures, made valid XML, into BUILD/figures."""
    src, dst = os.path.join(site, 'figures'), os.path.join(build, 'figures')
    if not os.path.isdir(src):
        web.die(f'{src} is missing: build the site first (make docs)')
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for name in sorted(os.listdir(src)):
        if name.endswith('.svg'):
            with open(os.path.join(src, name), encoding='utf-8') as f:
                text = unique_ids(f.read())
            with open(os.path.join(dst, name), 'w', encoding='utf-8') as f:
                f.write(text)
        else:
            shutil.copy(os.path.join(src, name), dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--site', default='build/site')
    ap.add_argument('--out', default='build/epub/ndarray-workbook.epub')
    a = ap.parse_args()
    lessons, pages = web.site_pages()
    build = 'build/epub'
    os.makedirs(build, exist_ok=True)
    copy_figures(a.site, build)
    meta_file = web.write_site_meta(lessons, pages, build)
    code_list = os.path.join(build, 'code-list.txt')   # the filter's; unused here
    blocks, api = [], None
    for p in pages:
        base = 'index' if p == 'docs/index.md' else os.path.basename(p)[:-3]
        doc = json.loads(pandoc(
            ['--from', 'markdown', '--to', 'json', '--metadata-file', meta_file,
             '--lua-filter', 'docs/filters/include.lua', '--lua-filter', 'docs/filters/epub.lua',
             '-M', 'root=.', '-M', 'edition=student', '-M', 'pages=' + ' '.join(pages),
             '-M', f'code-list={code_list}', '-M', f'epub-page={base}', p], p))
        api = doc['pandoc-api-version']
        blocks += doc['blocks']
    index = web.front_matter('docs/index.md')
    book = {'pandoc-api-version': api, 'blocks': blocks, 'meta': {}}
    meta = {'title': index.get('title', 'ndarray workbook'),
            'subtitle': index.get('subtitle', ''), 'lang': 'en-GB',
            'creator': 'The workbook\'s authors'}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    args = ['--from', 'json', '--to', 'epub3', '--output', a.out, '--toc', '--toc-depth=2',
            '--epub-chapter-level=1', '--mathml', '--highlight-style', 'tango',
            '--resource-path', build]
    for k, v in meta.items():
        if v:
            args += ['-M', f'{k}={v}']
    pandoc(args, a.out, stdin=json.dumps(book))
    print(f'docs: {a.out}: {len(pages)} chapters')


if __name__ == '__main__':
    main()
