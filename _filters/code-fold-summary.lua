-- Quarto 1.7 turns the code-fold summary ("Show the code") into document inlines anew for every
-- folded code cell, with a full markdown read and Quarto's normalisation passes each time: about
-- 15 ms a cell, some 9 s of this book's render. The summary is the same short string on every
-- cell, so this filter remembers each string's parse and hands every cell its own deep copy of
-- it: the same inlines, parsed once. It changes nothing else, and does nothing when Quarto no
-- longer has the function it wraps (a later version).
local parse = _G.string_to_quarto_ast_inlines
if type(parse) == "function" then
  local parsed = {}
  _G.string_to_quarto_ast_inlines = function(text, sep)
    if type(text) ~= "string" or (sep ~= nil and type(sep) ~= "string") then
      return parse(text, sep)
    end
    local key = text .. "\0" .. (sep or "")
    local hit = parsed[key]
    if hit == nil then
      hit = parse(text, sep)
      parsed[key] = hit
    end
    return hit:clone()
  end
end
return {}
