--[[
include.lua -- pandoc Lua filter: put the real, tagged source code into the
lesson texts, so that the text cannot drift from the code.

  ```{.c include="skeleton:slice"}
  ```

is replaced by the lines of the region `//@ snippet slice` ... `//@ end
snippet slice` of skeleton/src/*.c (or *.cu), with every marker line (`//@
...`) removed.  `solution:NAME` reads solution/src instead; there the stub
of each solution region (`//@ stub` up to `//@ end solution`) is dropped
too, so the reader sees the code as it compiles.  The block's body, if any,
is ignored.

An example of tool output,

  ```{.console example="NAME"}
  ```

is replaced by build/docs/examples/NAME.txt, written by docs/examples.py
from a real run (`make docs` runs it first); a missing file is an error.

Editions (metadata `edition`, set with -M edition=...):
  student     (default) an include shows what it names;
  instructor  a `skeleton:` include is followed by the solution of the same
              snippet, in a <div class="solution"> under the heading
              "Solution".

An unknown tree or tag, or a fenced C/CUDA block that is not an include, is
an error: pandoc stops with the file and the tag.  docs/check_snippets.py
does the same checks for all lessons at once, and compiles the sources.

Links.  Lessons and guides link to each other by their repository paths
(`02-compact.md`, `../docs/student-guide.md`), which work when the markdown
is read on its own.  On the site every page sits in one folder, so a link to
a page of the site becomes `NAME.html`; a link to any other file of the
repository (`../solution/include/nd.h`) becomes `code/PATH.html`, a page
that docs/site.py makes with the file's text, and is listed in the file
named by metadata `code-list` (one path a line).

Metadata read: root (the repository, default "."), edition, pages (a
space-separated list of the site's source paths, relative to root),
code-list.  Environment read: DOCS_SKELETON, the folder that skeleton/...
is read from (docs/docs.mk: the skeleton as shipped, generated from
solution/), when set.
]]

local root = "."
local edition = "student"
local site_pages = {}   -- "lessons/01-views.md" -> "01-views.html"
local code_list = nil
local source_dir = "."  -- the input file's folder, relative to root

local C_CLASSES = { c = true, cuda = true, cpp = true, ["c++"] = true, h = true, cu = true }

local function fail(msg)
  local input = PANDOC_STATE.input_files[1] or "(stdin)"
  io.stderr:write(input .. ": error: " .. msg .. "\n")
  os.exit(1)
end

-- Where a repository path is read from: the skeleton's files from
-- $DOCS_SKELETON when it is set (docs/docs.mk sets it to the skeleton as
-- shipped, generated from solution/, so that a student's edited skeleton/
-- is never shown or needed), every other one from root.  Pages still name
-- them skeleton/...
local skeleton_dir = os.getenv("DOCS_SKELETON")
if skeleton_dir == "" then skeleton_dir = nil end
local function source_path(rel)
  if skeleton_dir and rel:sub(1, 9) == "skeleton/" then
    return skeleton_dir .. "/" .. rel:sub(10)
  end
  return root .. "/" .. rel
end

local function read_lines(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  return lines
end

-- The source files of a tree: src/*.c, *.cu, *.h, *.cuh, sorted.
local file_cache = {}
local function tree_files(tree)
  if file_cache[tree] then return file_cache[tree] end
  local files = {}
  local p = io.popen('ls -1 "' .. source_path(tree .. "/src") .. '" 2>/dev/null')
  if p then
    for name in p:lines() do
      if name:match("%.c$") or name:match("%.cu$") or name:match("%.h$") or name:match("%.cuh$") then
        files[#files + 1] = tree .. "/src/" .. name
      end
    end
    p:close()
  end
  table.sort(files)
  file_cache[tree] = files
  return files
end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- The directive of a marker line ("snippet slice"), or nil.
local function marker(line)
  local rest = line:match("^%s*//@(.*)$")
  if rest == nil then return nil end
  return trim(rest):gsub("%s+", " ")
end

-- The code of snippet `name` in `tree`: the text, the file it is in, and
-- whether it contains a solution region.
local function snippet(tree, name)
  for _, rel in ipairs(tree_files(tree)) do
    local lines = read_lines(source_path(rel))
    if lines then
      local first
      for i, line in ipairs(lines) do
        if marker(line) == "snippet " .. name then first = i; break end
      end
      if first then
        local out, in_stub, has_solution = {}, false, false
        for i = first + 1, #lines do
          local line = lines[i]
          local m = marker(line)
          if m == "end snippet " .. name then
            -- Drop leading and trailing blank lines.
            while #out > 0 and out[1]:match("^%s*$") do table.remove(out, 1) end
            while #out > 0 and out[#out]:match("^%s*$") do table.remove(out) end
            return table.concat(out, "\n"), rel, has_solution
          elseif m then
            if m:match("^solution ") then has_solution = true end
            if m == "stub" then in_stub = true end
            if m:match("^end solution ") then in_stub = false end
          elseif not in_stub then
            out[#out + 1] = line
          end
        end
        fail("snippet '" .. name .. "' in " .. rel .. " is not closed")
      end
    end
  end
  return nil
end

local function code_block(text, lang, tree, name, rel)
  return pandoc.CodeBlock(text, pandoc.Attr("", { lang, "snippet" },
    { { "data-snippet", tree .. ":" .. name }, { "data-file", rel } }))
end

-- A caption under the code: where it comes from.
local function source_note(rel, name)
  return pandoc.Div({ pandoc.Plain({ pandoc.Str("From "), pandoc.Code(rel),
    pandoc.Str(", snippet "), pandoc.Code(name), pandoc.Str(".") }) },
    pandoc.Attr("", { "snippet-source" }))
end

-- An example of tool output: ```{.console example="NAME"}``` becomes the
-- text that docs/examples.py wrote from a real run, build/docs/examples/
-- NAME.txt (the block's body is the copy in the page, which `make
-- docs-check` keeps equal to it).
local function example(block, name)
  local f = io.open(root .. "/build/docs/examples/" .. name .. ".txt", "r")
  if not f then
    fail('example="' .. name .. '" has not been run: make docs-examples (docs/examples.py)')
  end
  local text = f:read("a"):gsub("\n$", "")
  f:close()
  return pandoc.CodeBlock(text, pandoc.Attr("", { "console" }, { { "data-example", name } }))
end

local function include(block)
  if block.attributes["example"] then
    return example(block, block.attributes["example"])
  end
  local spec = block.attributes["include"]
  local lang = "c"
  for _, cl in ipairs(block.classes) do
    if C_CLASSES[cl] then lang = cl end
  end
  if lang == "h" then lang = "c" end
  if lang == "cu" or lang == "cuda" then lang = "cpp" end   -- skylighting has no CUDA
  if spec == nil then
    for _, cl in ipairs(block.classes) do
      if C_CLASSES[cl] then
        fail("a fenced " .. cl .. " block that is not an include; lessons never paste code: "
          .. "tag the region in solution/src with //@ snippet NAME and write "
          .. '```{.c include="skeleton:NAME"}```')
      end
    end
    return nil
  end
  local tree, name = spec:match("^(%w+):([%w_]+)$")
  if tree ~= "skeleton" and tree ~= "solution" then
    fail('include="' .. spec .. '": expected include="skeleton:NAME" or include="solution:NAME"')
  end
  local text, rel = snippet(tree, name)
  if text == nil then
    fail('include="' .. spec .. '": no snippet \'' .. name .. "' in " .. tree .. "/src "
      .. "(python3 grader/skelgen.py --list-snippets " .. tree .. " lists them)")
  end
  local blocks = { code_block(text, lang, tree, name, rel) }
  -- The skeleton has no solution markers left: ask the solution's copy of
  -- the snippet whether it holds a region that students write.
  local sol, srel, sol_has_solution = nil, nil, false
  if tree == "skeleton" and edition == "instructor" then
    sol, srel, sol_has_solution = snippet("solution", name)
    if sol == nil then
      fail('include="' .. spec .. '": the snippet is missing in solution/src')
    end
  end
  if sol_has_solution then
    blocks[#blocks + 1] = pandoc.Div({
      pandoc.Para({ pandoc.Strong({ pandoc.Str("Solution") }), pandoc.Space(),
        pandoc.Str("(instructor edition)") }),
      code_block(sol, lang, "solution", name, srel),
      source_note(srel, name),
    }, pandoc.Attr("", { "solution" }))
  else
    blocks[#blocks + 1] = source_note(rel, name)
  end
  return blocks
end

-- Normalise "a/b/../c" to "a/c".
local function normalize(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      if #parts > 0 and parts[#parts] ~= ".." then table.remove(parts) else parts[#parts + 1] = part end
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

-- On the contents page, a div with id "lesson-list" becomes the list of
-- the lessons that exist (metadata `lessons`, written by docs/site.py).
local lesson_meta = nil
local function lesson_list(div)
  if div.identifier ~= "lesson-list" then return nil end
  local items = {}
  for _, l in ipairs(lesson_meta or {}) do
    local href = pandoc.utils.stringify(l.href)
    local item = { pandoc.Plain({ pandoc.Link(pandoc.utils.stringify(l.title), href) }) }
    if l.summary then
      item[#item + 1] = pandoc.Plain({ pandoc.LineBreak(), pandoc.Span(pandoc.utils.stringify(l.summary),
        pandoc.Attr("", { "summary" })) })
    end
    items[#items + 1] = item
  end
  if #items == 0 then fail("the contents page has no lessons to list") end
  return pandoc.Div({ pandoc.OrderedList(items) }, pandoc.Attr("lesson-list", { "lesson-list" }))
end

local code_seen = {}
local function link(el)
  local target = el.target
  if target:match("^%a[%w+.-]*:") or target:match("^#") or target:match("^/") then
    return nil   -- a URL, an anchor, or absolute
  end
  local path, frag = target:match("^([^#]*)(#?.*)$")
  if path == "" then return nil end
  local rel = normalize(source_dir .. "/" .. path)
  if site_pages[rel] then
    el.target = site_pages[rel] .. frag
    return el
  end
  if rel:match("^figures/") or rel:match("^lessons/figures/.*%.svg$") then
    return nil
  end
  if exists(root .. "/" .. rel) and not rel:match("/$") then
    el.target = "code/" .. rel .. ".html" .. frag
    if code_list and not code_seen[rel] then
      code_seen[rel] = true
      local f = io.open(code_list, "a")
      if f then f:write(rel .. "\n") f:close() end
    end
    return el
  end
  return nil   -- left as it is: docs-check reports it if it is broken
end

local function meta(m)
  if m.root then root = pandoc.utils.stringify(m.root) end
  if m.edition then edition = pandoc.utils.stringify(m.edition) end
  if edition ~= "student" and edition ~= "instructor" then
    fail("edition '" .. edition .. "': expected student or instructor")
  end
  if m.lessons then lesson_meta = m.lessons end
  if m["code-list"] then code_list = pandoc.utils.stringify(m["code-list"]) end
  if m.pages then
    for p in pandoc.utils.stringify(m.pages):gmatch("%S+") do
      local base = p:match("([^/]+)%.md$")
      site_pages[p] = (p == "docs/index.md") and "index.html" or (base .. ".html")
    end
  end
  local input = PANDOC_STATE.input_files[1]
  if input then
    local dir = input:match("^(.*)/[^/]*$") or "."
    -- input paths are given relative to root by docs/site.py
    source_dir = normalize(dir)
    if source_dir == "" then source_dir = "." end
  end
  return nil
end

return {
  { Meta = meta },
  { CodeBlock = include, Link = link, Div = lesson_list },
}
