--[[
epub.lua -- pandoc Lua filter: one page of the web book as one chapter of
the EPUB.  Runs after include.lua (which has made the links site links);
docs/epub.py runs both on each page, then joins the chapters.

Metadata read: epub-page (the page's base name, e.g. "01-views"; the
chapter's id), title (the chapter's title).

  - every identifier X of the page becomes PAGE--X, so that two chapters
    with a section of the same name keep their anchors apart;
  - links: "#X" -> "#PAGE--X"; to another page of the site, "NAME.html"
    -> "#NAME" (that chapter) and "NAME.html#X" -> "#NAME--X"; to a code
    page (code/PATH.html) or any other local file, the link is dropped and
    its text kept, since the book carries neither (web links stay);
  - a div of class "web-only" (say, "download the EPUB") is dropped;
  - the page's title becomes the chapter's level-1 heading, id PAGE.
]]

local page = nil

local function prefixed(id)
  if id == nil or id == "" then return id end
  return page .. "--" .. id
end

local function retarget(target)
  if target:match("^%a[%w+.-]*:") then return target end   -- a URL
  local frag = target:match("^#(.+)$")
  if frag then return "#" .. prefixed(frag) end
  local name, rest = target:match("^([%w_.-]+)%.html(#?.*)$")
  if name and not target:match("^code/") then
    local f = rest:match("^#(.+)$")
    return f and ("#" .. name .. "--" .. f) or ("#" .. name)
  end
  return nil   -- not in the book
end

local function with_ids(el)
  if el.identifier then el.identifier = prefixed(el.identifier) end
  return el
end

local function link(el)
  local t = retarget(el.target)
  if t == nil then return el.content end
  el.target = t
  return el
end

local function div(el)
  if el.classes:includes("web-only") then return {} end
  return with_ids(el)
end

return {
  { Meta = function(m)
      page = m["epub-page"] and pandoc.utils.stringify(m["epub-page"])
      if not page then
        io.stderr:write("epub.lua: no metadata epub-page\n")
        os.exit(1)
      end
    end },
  { Header = with_ids, Span = with_ids, CodeBlock = with_ids, Code = with_ids,
    Div = div, Link = link },
  { Pandoc = function(doc)
      local title = doc.meta.title and pandoc.utils.stringify(doc.meta.title) or page
      table.insert(doc.blocks, 1, pandoc.Header(1, title, pandoc.Attr(page)))
      return doc
    end },
}
