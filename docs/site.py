#!/usr/bin/env python3
"""site.py -- render the workbook's web site with pandoc (make docs runs it).

Usage:
    site.py [--edition student|instructor] [--out DIR]

Run from the repository root.  Pages, in reading order:

    docs/index.md              -> index.html (the table of contents)
    lessons/NN-name.md         -> NN-name.html, one per lesson, with
                                  previous/next links between lessons
    docs/student-guide.md      -> student-guide.html
    docs/author-guide.md       -> author-guide.html
    docs/instructor-guide.md   -> instructor-guide.html

Each page goes through docs/filters/include.lua (tagged code from the real
sources) and docs/template.html.  Math is rendered in the browser by KaTeX,
copied from Debian's libjs-katex into DIR/katex, so nothing is fetched from
the network.  Files of the repository that a page links to (nd.h, the
lesson sources) become DIR/code/PATH.html.  Figures are made separately
(lessons/figures/*.c, by docs/docs.mk) into DIR/figures.

With $DOCS_SKELETON set (docs/docs.mk sets it), skeleton/... is read from
that folder, the skeleton as shipped (generated from solution/), both for
the included code and for the code pages: a student's edited skeleton/ is
never shown, and never has to compile for the book to build.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

KATEX = '/usr/share/javascript/katex'
GUIDES = ['docs/student-guide.md', 'docs/author-guide.md', 'docs/instructor-guide.md']
LANG = {'.c': 'c', '.h': 'c', '.cu': 'cpp', '.cuh': 'cpp', '.py': 'python',
        '.sh': 'bash', '.lua': 'lua', '.md': 'markdown', '.mk': 'makefile',
        'Makefile': 'makefile'}


def die(msg):
    print(f'docs: error: {msg}', file=sys.stderr)
    sys.exit(1)


def front_matter(path):
    """The YAML front matter's simple `key: value` lines, as a dict."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    m = re.match(r'---\n(.*?)\n(---|\.\.\.)\n', text, re.S)
    meta = {}
    if m:
        for line in m.group(1).splitlines():
            kv = re.match(r'([A-Za-z_-]+):\s*(.*)$', line)
            if kv:
                meta[kv.group(1)] = kv.group(2).strip().strip('"\'')
    return meta


def yaml_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def pandoc(args, what):
    r = subprocess.run(['pandoc'] + args, capture_output=True, text=True)
    # Pandoc's warnings (an unresolved reference, a duplicate id) are errors
    # here: a page that renders with a warning is a page with a fault.
    if r.returncode != 0 or r.stderr.strip():
        die(f'pandoc failed on {what}:\n{r.stderr.strip()}')


def site_pages():
    """The lessons, and every page of the site in reading order."""
    lessons = sorted(os.path.join('lessons', f) for f in os.listdir('lessons')
                     if re.match(r'\d\d-.*\.md$', f))
    return lessons, ['docs/index.md'] + lessons + GUIDES


def html_name(page):
    return 'index.html' if page == 'docs/index.md' else os.path.basename(page)[:-3] + '.html'


def write_site_meta(lessons, pages, build):
    """Site-wide metadata (the lesson list for the contents page and nav) in
    BUILD/site-meta.yaml; returns its path."""
    os.makedirs(build, exist_ok=True)
    meta_file = os.path.join(build, 'site-meta.yaml')
    titles = {p: front_matter(p).get('title', os.path.basename(p)) for p in pages}
    with open(meta_file, 'w', encoding='utf-8') as f:
        f.write('---\nlessons:\n')
        for p in lessons:
            fm = front_matter(p)
            f.write(f'  - href: {html_name(p)}\n    title: {yaml_str(titles[p])}\n')
            if fm.get('summary'):
                f.write(f'    summary: {yaml_str(fm["summary"])}\n')
        f.write('guides:\n')
        for p in GUIDES:
            f.write(f'  - href: {html_name(p)}\n    title: {yaml_str(titles[p])}\n')
        f.write('...\n')
    return meta_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--edition', default='student', choices=['student', 'instructor'])
    ap.add_argument('--out', default='build/site')
    a = ap.parse_args()

    if not os.path.isdir(KATEX):
        die(f'{KATEX} is missing: run grader/install-deps.sh --docs (Debian package libjs-katex)')
    out = a.out
    os.makedirs(out, exist_ok=True)
    for sub in ('code', 'katex'):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)

    lessons, pages = site_pages()
    html = {p: html_name(p) for p in pages}
    titles = {p: front_matter(p).get('title', os.path.basename(p)) for p in pages}
    build = 'build/docs'
    meta_file = write_site_meta(lessons, pages, build)
    code_list = os.path.join(build, 'code-list.txt')
    open(code_list, 'w').close()

    common = ['--from', 'markdown', '--to', 'html5', '--standalone',
              '--template', 'docs/template.html',
              '--lua-filter', 'docs/filters/include.lua',
              '--katex=katex/', '--highlight-style', 'tango',
              '--metadata-file', meta_file,
              '-M', 'root=.', '-M', f'edition={a.edition}',
              '-M', 'pages=' + ' '.join(pages), '-M', f'code-list={code_list}',
              '-V', f'edition={a.edition}']
    if a.edition == 'instructor':
        common += ['-V', 'instructor=true']
    for i, p in enumerate(pages):
        args = common + [p, '-o', os.path.join(out, html[p])]
        if p in lessons:
            j = lessons.index(p)
            args += ['--toc', '--toc-depth=2', '-V', 'lesson=true']
            if j > 0:
                args += ['-V', f'prev-url={html[lessons[j-1]]}',
                         '-V', f'prev-title={titles[lessons[j-1]]}']
            if j + 1 < len(lessons):
                args += ['-V', f'next-url={html[lessons[j+1]]}',
                         '-V', f'next-title={titles[lessons[j+1]]}']
        elif p in GUIDES:
            args += ['--toc', '--toc-depth=2']
        pandoc(args, p)

    # Pages for the repository files that pages link to.
    with open(code_list, encoding='utf-8') as f:
        linked = sorted(set(line.strip() for line in f if line.strip()))
    skeleton = os.environ.get('DOCS_SKELETON')   # as include.lua reads it
    for rel in linked:
        src = (os.path.join(skeleton, rel[len('skeleton/'):])
               if skeleton and rel.startswith('skeleton/') else rel)
        with open(src, encoding='utf-8') as f:
            text = f.read()
        ext = os.path.splitext(rel)[1] or os.path.basename(rel)
        fence = '`' * max(3, 1 + max((len(m) for m in re.findall(r'`+', text)), default=0))
        md = (f'---\ntitle: {yaml_str(rel)}\n---\n\n'
              f'The file `{rel}` as {"the student tree ships it" if src != rel else "it is in the repository"} when this site was built.\n\n'
              f'{fence} {{.{LANG.get(ext, "default")} .numberLines}}\n{text}\n{fence}\n')
        dst = os.path.join(out, 'code', rel + '.html')
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        depth = '../' * (rel.count('/') + 1)
        r = subprocess.run(['pandoc', '--from', 'markdown', '--to', 'html5', '--standalone',
                            '--template', 'docs/template.html', '--highlight-style', 'tango',
                            '--metadata-file', meta_file, '-V', f'base={depth}',
                            '-V', 'code-page=true', '-V', f'edition={a.edition}',
                            '-o', dst], input=md, capture_output=True, text=True)
        if r.returncode != 0 or r.stderr.strip():
            die(f'pandoc failed on {rel}:\n{r.stderr.strip()}')

    # Style and KaTeX (script, style sheet, fonts), all served locally.
    shutil.copy('docs/style.css', os.path.join(out, 'style.css'))
    kdst = os.path.join(out, 'katex')
    os.makedirs(os.path.join(kdst, 'fonts'))
    for name in ('katex.min.js', 'katex.min.css'):
        shutil.copy(os.path.join(KATEX, name), os.path.join(kdst, name))   # follows links
    fonts = os.path.realpath(os.path.join(KATEX, 'fonts'))
    for name in os.listdir(fonts):
        if name.endswith('.woff2'):   # every browser that runs KaTeX 0.16 reads woff2
            shutil.copy(os.path.join(fonts, name), os.path.join(kdst, 'fonts', name))
    # katex.min.css names woff and ttf files after each woff2 as fallbacks;
    # the browser stops at the first (woff2) it can read.
    print(f'docs: {len(pages)} pages, {len(linked)} source pages, edition {a.edition}, in {out}/')


if __name__ == '__main__':
    main()
