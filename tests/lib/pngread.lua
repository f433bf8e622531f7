-- pngread.lua — a small PNG reader for the tests, independent of libpng:
-- zlib inflate (stored, fixed and dynamic Huffman blocks, RFC 1950/1951)
-- and the five PNG row filters, for 8-bit RGB and RGBA images without
-- interlacing. read(path) returns {width, height, channels, pixel(x, y)}
-- (x, y from 0; pixel returns r, g, b) or nil and a message.
local M = {}

local LBASE = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
  163, 195, 227, 258 }
local LEXT = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 }
local DBASE = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049,
  3073, 4097, 6145, 8193, 12289, 16385, 24577 }
local DEXT = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 }
local CLORDER = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 }

-- Canonical Huffman code from code lengths (lengths[0..n-1]), as in zlib's puff.c.
local function huffman(lengths, n)
  local count, offs, symbol = {}, {}, {}
  for len = 0, 15 do count[len] = 0 end
  for s = 0, n - 1 do count[lengths[s]] = count[lengths[s]] + 1 end
  offs[1] = 0
  for len = 1, 14 do offs[len + 1] = offs[len] + count[len] end
  for s = 0, n - 1 do
    local len = lengths[s]
    if len ~= 0 then
      symbol[offs[len]] = s
      offs[len] = offs[len] + 1
    end
  end
  return { count = count, symbol = symbol }
end

-- Inflates a zlib stream; returns the bytes as an array (1-based).
function M.inflate(data)
  local pos, bitbuf, bitcnt = 3, 0, 0 -- past the two-byte zlib header
  local out, n = {}, 0
  local byte = string.byte

  local function bits(k)
    while bitcnt < k do
      local b = byte(data, pos)
      if not b then error("inflate: truncated stream") end
      pos = pos + 1
      bitbuf = bitbuf | (b << bitcnt)
      bitcnt = bitcnt + 8
    end
    local v = bitbuf & ((1 << k) - 1)
    bitbuf, bitcnt = bitbuf >> k, bitcnt - k
    return v
  end

  local function decode(h)
    local code, first, index = 0, 0, 0
    local count, symbol = h.count, h.symbol
    for len = 1, 15 do
      code = code | bits(1)
      local c = count[len]
      if code - c < first then return symbol[index + code - first] end
      index, first = index + c, (first + c) << 1
      code = code << 1
    end
    error("inflate: bad code")
  end

  local function codes(lit, dist)
    while true do
      local sym = decode(lit)
      if sym < 256 then
        n = n + 1
        out[n] = sym
      elseif sym == 256 then
        return
      else
        sym = sym - 257
        local len = LBASE[sym + 1] + bits(LEXT[sym + 1])
        local d = decode(dist)
        local back = DBASE[d + 1] + bits(DEXT[d + 1])
        if back > n then error("inflate: distance too far back") end
        for _ = 1, len do
          n = n + 1
          out[n] = out[n - back]
        end
      end
    end
  end

  local fixed_lit, fixed_dist
  repeat
    local last, kind = bits(1), bits(2)
    if kind == 0 then
      bitbuf, bitcnt = 0, 0
      local len = byte(data, pos) | byte(data, pos + 1) << 8
      pos = pos + 4
      for i = 0, len - 1 do
        n = n + 1
        out[n] = byte(data, pos + i)
      end
      pos = pos + len
    elseif kind == 1 then
      if not fixed_lit then
        local l = {}
        for s = 0, 143 do l[s] = 8 end
        for s = 144, 255 do l[s] = 9 end
        for s = 256, 279 do l[s] = 7 end
        for s = 280, 287 do l[s] = 8 end
        fixed_lit = huffman(l, 288)
        local d = {}
        for s = 0, 29 do d[s] = 5 end
        fixed_dist = huffman(d, 30)
      end
      codes(fixed_lit, fixed_dist)
    elseif kind == 2 then
      local nlen, ndist, ncode = bits(5) + 257, bits(5) + 1, bits(4) + 4
      local cl = {}
      for i = 0, 18 do cl[i] = 0 end
      for i = 1, ncode do cl[CLORDER[i]] = bits(3) end
      local clh = huffman(cl, 19)
      local lengths, i = {}, 0
      while i < nlen + ndist do
        local sym = decode(clh)
        if sym < 16 then
          lengths[i] = sym
          i = i + 1
        else
          local rep, val
          if sym == 16 then
            if i == 0 then error("inflate: repeat with no previous length") end
            val, rep = lengths[i - 1], 3 + bits(2)
          elseif sym == 17 then
            val, rep = 0, 3 + bits(3)
          else
            val, rep = 0, 11 + bits(7)
          end
          for _ = 1, rep do
            lengths[i] = val
            i = i + 1
          end
        end
      end
      local lit, dist = {}, {}
      for s = 0, nlen - 1 do lit[s] = lengths[s] end
      for s = 0, ndist - 1 do dist[s] = lengths[nlen + s] end
      codes(huffman(lit, nlen), huffman(dist, ndist))
    else
      error("inflate: bad block type")
    end
  until last == 1
  return out, n
end

local function u32(s, i)
  local a, b, c, d = s:byte(i, i + 3)
  return a << 24 | b << 16 | c << 8 | d
end

--- Width and height from the IHDR chunk (no decoding).
function M.size(bytes)
  if bytes:sub(1, 8) ~= "\137PNG\r\n\26\n" or bytes:sub(13, 16) ~= "IHDR" then return nil end
  return u32(bytes, 17), u32(bytes, 21)
end

function M.decode(bytes)
  local w, h = M.size(bytes)
  if not w then return nil, "not a PNG" end
  local depth, ctype, interlace = bytes:byte(25), bytes:byte(26), bytes:byte(29)
  local channels = ({ [2] = 3, [6] = 4 })[ctype]
  if depth ~= 8 or not channels or interlace ~= 0 then return nil, "unsupported PNG format" end
  local idat, p = {}, 9
  while p <= #bytes do
    local len, kind = u32(bytes, p), bytes:sub(p + 4, p + 7)
    if kind == "IDAT" then idat[#idat + 1] = bytes:sub(p + 8, p + 7 + len) end
    p = p + 12 + len
  end
  local raw = M.inflate(table.concat(idat))
  local stride = w * channels
  local px = {} -- unfiltered bytes, row-major, 1-based
  for y = 0, h - 1 do
    local f, src, dst = raw[y * (stride + 1) + 1], y * (stride + 1) + 1, y * stride
    for x = 1, stride do
      local v = raw[src + x]
      local a = x > channels and px[dst + x - channels] or 0
      local b = y > 0 and px[dst - stride + x] or 0
      local c = (x > channels and y > 0) and px[dst - stride + x - channels] or 0
      if f == 1 then
        v = v + a
      elseif f == 2 then
        v = v + b
      elseif f == 3 then
        v = v + (a + b) // 2
      elseif f == 4 then
        local pp = a + b - c
        local pa, pb, pc = math.abs(pp - a), math.abs(pp - b), math.abs(pp - c)
        v = v + ((pa <= pb and pa <= pc) and a or (pb <= pc and b or c))
      elseif f ~= 0 then
        return nil, "bad filter type " .. tostring(f)
      end
      px[dst + x] = v & 255
    end
  end
  return {
    width = w,
    height = h,
    channels = channels,
    pixel = function(x, y)
      local i = (y * w + x) * channels
      return px[i + 1], px[i + 2], px[i + 3]
    end,
  }
end

function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil, path .. ": cannot open" end
  local bytes = f:read("a")
  f:close()
  return M.decode(bytes)
end

return M
