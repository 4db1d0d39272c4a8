-- Wireshark dissector for the fanin header (docs/protocol.md, proto/src/wire/header.rs).
--
--   tshark -X lua_script:tools/wireshark/fanin.lua -r capture.pcap -V
--   wireshark -X lua_script:tools/wireshark/fanin.lua capture.pcap
-- or copy this file into Wireshark's personal plugins folder.
--
-- Registered on UDP port FANIN_UDP_PORT and as a UDP heuristic (version 1, type 1 to 5,
-- length exactly header + 4 x element count; or a key-value type 8..13, length exactly
-- header + 8 x tuple count; or version 2, type 1 to 5, length exactly 86 + 4 x element
-- count), so captures on other ports decode too.
--
-- Version 2 (docs/protocol.md "Header version 2", proto/src/wire/wide.rs): dynamic jobs of
-- more than 64 ranks. Bytes 0-12 as version 1, byte 13 reserved, a 16-bit count at 14,
-- bytes 16-21 reserved, a 512-bit bitmap at 22 (eight big-endian words, word w holding
-- ranks 64w..64w+63), elements from byte 86.
-- The constants below are checked against fanin-proto by host/tests/cli/wireshark.rs.

local FANIN_UDP_PORT = 48879
local HEADER_LEN = 22
local ELEMENT_BYTES = 4
local VERSION = 1
local MAX_ELEMENTS = 2237
local VERSION_2 = 2
local HEADER_LEN_V2 = 86
local MAX_ELEMENTS_V2 = 2221
local BITMAP_V2 = 22
local BITMAP_WORDS_V2 = 8

local fanin = Proto("fanin", "fanin in-network aggregation")

local types = { [1] = "Contribution", [2] = "Result", [3] = "Join", [4] = "Accept", [5] = "Refuse" }
-- REFUSE carries its reason in the child field.
local refuse_reasons = { [1] = "no session", [2] = "stale block" }

local f = fanin.fields
f.version = ProtoField.uint8("fanin.version", "Version", base.DEC)
f.type = ProtoField.uint8("fanin.type", "Type", base.DEC, types)
f.flags = ProtoField.uint8("fanin.flags", "Flags", base.HEX)
f.flag_bypass = ProtoField.bool("fanin.flags.bypass", "Bypass", 8, nil, 0x01)
f.flag_multicast = ProtoField.bool("fanin.flags.multicast", "Multicast", 8, nil, 0x02)
f.flag_partial = ProtoField.bool("fanin.flags.partial", "Partial", 8, nil, 0x04)
f.flag_overflow = ProtoField.bool("fanin.flags.overflow", "Overflow", 8, nil, 0x08)
f.flag_exp_mismatch = ProtoField.bool("fanin.flags.exp_mismatch", "Exponent mismatch", 8, nil, 0x10)
f.flag_reserved = ProtoField.uint8("fanin.flags.reserved", "Reserved", base.HEX, nil, 0xe0)
f.exponent = ProtoField.int8("fanin.exponent", "Exponent", base.DEC)
f.job = ProtoField.uint16("fanin.job", "Job", base.DEC)
f.elements = ProtoField.uint16("fanin.elements", "Element count", base.DEC)
f.block = ProtoField.uint32("fanin.block", "Block", base.DEC)
f.child = ProtoField.uint8("fanin.child", "Child index", base.DEC)
-- 16 bits wide: version 1 carries it in one byte, version 2 in two.
f.count = ProtoField.uint16("fanin.count", "Contribution count", base.DEC)
f.bitmap = ProtoField.uint64("fanin.bitmap", "Contributor bitmap", base.HEX)
f.bitmap_v2 = ProtoField.bytes("fanin.bitmap_v2", "Contributor bitmap (512 ranks)")
f.bitmap_word = ProtoField.uint64("fanin.bitmap_v2.word", "Bitmap word", base.HEX)
f.reserved = ProtoField.bytes("fanin.reserved", "Reserved")
f.element = ProtoField.int32("fanin.element", "Element", base.DEC)

local e_short = ProtoExpert.new("fanin.short", "Shorter than the fanin header",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_length = ProtoExpert.new("fanin.bad_length", "Element count disagrees with the datagram length",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_version = ProtoExpert.new("fanin.bad_version", "Unsupported version",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_type = ProtoExpert.new("fanin.bad_type", "Unknown packet type",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_flags = ProtoExpert.new("fanin.bad_flags", "Reserved flag bits set",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_count = ProtoExpert.new("fanin.bad_count", "Count disagrees with the contributor bitmap",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_many = ProtoExpert.new("fanin.too_many", "More elements than any configuration allows",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_reserved = ProtoExpert.new("fanin.bad_reserved", "Reserved header bytes set",
  expert.group.MALFORMED, expert.severity.ERROR)

local function popcount64(v)
  local n = 0
  local hi, lo = v:higher(), v:lower()
  for _, w in ipairs({ hi, lo }) do
    while w ~= 0 do
      n = n + (w % 2)
      w = math.floor(w / 2)
    end
  end
  return n
end

-- Key-value (ASK) packets, types 8..13 (docs/protocol.md "Key-value jobs",
-- proto/src/kv/wire.rs): the same 22 bytes read differently, then n x (u32 key, i32 value).
local KV_TUPLE_BYTES = 8
local KV_MAX_TUPLES = 64
local kv_types = { [8] = "KV data", [9] = "KV ack", [10] = "KV swap", [11] = "KV fetch",
  [12] = "KV clear", [13] = "KV fin" }
f.kv_type = ProtoField.uint8("fanin.kv.type", "Key-value type", base.DEC, kv_types)
f.kv_reply = ProtoField.bool("fanin.kv.reply", "Reply", 8, nil, 0x01)
f.kv_lane = ProtoField.uint8("fanin.kv.lane", "Channel (data/ack/fin) or array (fetch/clear)", base.DEC)
f.kv_tuples = ProtoField.uint16("fanin.kv.tuples", "Tuple count", base.DEC)
f.kv_seq = ProtoField.uint32("fanin.kv.seq", "Sequence (data/ack), packets (fin) or epoch", base.DEC)
f.kv_copy = ProtoField.uint8("fanin.kv.copy", "Shadow copy", base.DEC)
f.kv_count = ProtoField.uint8("fanin.kv.count", "Tuples to aggregate", base.DEC)
f.kv_aux = ProtoField.uint64("fanin.kv.aux", "Bitmap (data) or first aggregator (fetch/clear)", base.HEX)
f.kv_key = ProtoField.uint32("fanin.kv.key", "Key", base.DEC)
f.kv_value = ProtoField.int32("fanin.kv.value", "Value", base.DEC)
local e_kv_length = ProtoExpert.new("fanin.kv.bad_length", "Tuple count disagrees with the datagram length",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_kv_bitmap = ProtoExpert.new("fanin.kv.bad_bitmap", "Count disagrees with the data bitmap",
  expert.group.MALFORMED, expert.severity.ERROR)
fanin.experts = { e_short, e_length, e_version, e_type, e_flags, e_count, e_many, e_reserved,
  e_kv_length, e_kv_bitmap }

local function dissect_kv(tvb, pinfo, t)
  local len = tvb:len()
  local ktype = tvb(1, 1):uint()
  local n = tvb(6, 2):uint()
  t:add(f.version, tvb(0, 1))
  t:add(f.kv_type, tvb(1, 1))
  t:add(f.kv_reply, tvb(2, 1))
  t:add(f.kv_lane, tvb(3, 1))
  t:add(f.job, tvb(4, 2))
  local ni = t:add(f.kv_tuples, tvb(6, 2))
  if n > KV_MAX_TUPLES or len ~= HEADER_LEN + KV_TUPLE_BYTES * n then
    ni:add_proto_expert_info(e_kv_length)
  end
  t:add(f.kv_seq, tvb(8, 4))
  t:add(f.kv_copy, tvb(12, 1))
  local ci = t:add(f.kv_count, tvb(13, 1))
  if ktype == 8 and tvb(13, 1):uint() ~= popcount64(tvb(14, 8):uint64()) then
    ci:add_proto_expert_info(e_kv_bitmap)
  end
  t:add(f.kv_aux, tvb(14, 8))
  local avail = math.min(n, math.floor((len - HEADER_LEN) / KV_TUPLE_BYTES))
  for i = 0, avail - 1 do
    local o = HEADER_LEN + i * KV_TUPLE_BYTES
    local tt = t:add(fanin, tvb(o, KV_TUPLE_BYTES), "Tuple " .. i)
    tt:add(f.kv_key, tvb(o, 4))
    tt:add(f.kv_value, tvb(o + 4, 4))
  end
  pinfo.cols.info = string.format("%s%s job=%d lane=%d seq=%d tuples=%d",
    kv_types[ktype] or ("type " .. ktype), (bit.band(tvb(2, 1):uint(), 1) == 1) and " reply" or "",
    tvb(4, 2):uint(), tvb(3, 1):uint(), tvb(8, 4):uint(), n)
  return len
end

function fanin.dissector(tvb, pinfo, tree)
  local len = tvb:len()
  pinfo.cols.protocol = "FANIN"
  local t = tree:add(fanin, tvb())
  if len < HEADER_LEN then
    t:add_proto_expert_info(e_short)
    return len
  end
  local version = tvb(0, 1):uint()
  local v2 = version == VERSION_2
  if v2 and len < HEADER_LEN_V2 then
    t:add_proto_expert_info(e_short)
    return len
  end
  if not v2 and tvb(1, 1):uint() >= 8 and kv_types[tvb(1, 1):uint()] ~= nil then
    return dissect_kv(tvb, pinfo, t)
  end
  local hlen = v2 and HEADER_LEN_V2 or HEADER_LEN
  local most = v2 and MAX_ELEMENTS_V2 or MAX_ELEMENTS
  local ptype = tvb(1, 1):uint()
  local flags = tvb(2, 1):uint()
  local job = tvb(4, 2):uint()
  local n = tvb(6, 2):uint()
  local block = tvb(8, 4):uint()
  local count, pop
  if v2 then
    count = tvb(14, 2):uint()
    pop = 0
    for w = 0, BITMAP_WORDS_V2 - 1 do
      pop = pop + popcount64(tvb(BITMAP_V2 + 8 * w, 8):uint64())
    end
  else
    count = tvb(13, 1):uint()
    pop = popcount64(tvb(14, 8):uint64())
  end

  local vi = t:add(f.version, tvb(0, 1))
  if version ~= VERSION and not v2 then vi:add_proto_expert_info(e_version) end
  local ti = t:add(f.type, tvb(1, 1))
  if types[ptype] == nil then ti:add_proto_expert_info(e_type) end
  local fl = t:add(f.flags, tvb(2, 1))
  fl:add(f.flag_bypass, tvb(2, 1))
  fl:add(f.flag_multicast, tvb(2, 1))
  fl:add(f.flag_partial, tvb(2, 1))
  fl:add(f.flag_overflow, tvb(2, 1))
  fl:add(f.flag_exp_mismatch, tvb(2, 1))
  fl:add(f.flag_reserved, tvb(2, 1))
  if bit.band(flags, 0xe0) ~= 0 then fl:add_proto_expert_info(e_flags) end
  t:add(f.exponent, tvb(3, 1))
  t:add(f.job, tvb(4, 2))
  local ni = t:add(f.elements, tvb(6, 2))
  if n > most then ni:add_proto_expert_info(e_many) end
  if len ~= hlen + ELEMENT_BYTES * n then ni:add_proto_expert_info(e_length) end
  t:add(f.block, tvb(8, 4))
  local chi = t:add(f.child, tvb(12, 1))
  if ptype == 5 then
    chi:append_text(" (reason: " .. (refuse_reasons[tvb(12, 1):uint()] or "unknown") .. ")")
  elseif ptype == 3 then
    t:add(fanin, tvb(8, 4), "Nonce: " .. block)
  end
  if v2 then
    local r0 = t:add(f.reserved, tvb(13, 1))
    if tvb(13, 1):uint() ~= 0 then r0:add_proto_expert_info(e_reserved) end
    local ci = t:add(f.count, tvb(14, 2))
    if count ~= pop then ci:add_proto_expert_info(e_count) end
    local r1 = t:add(f.reserved, tvb(16, 6))
    for i = 16, 21 do
      if tvb(i, 1):uint() ~= 0 then r1:add_proto_expert_info(e_reserved) break end
    end
    local bt = t:add(f.bitmap_v2, tvb(BITMAP_V2, 8 * BITMAP_WORDS_V2))
    for w = 0, BITMAP_WORDS_V2 - 1 do
      bt:add(f.bitmap_word, tvb(BITMAP_V2 + 8 * w, 8)):prepend_text(
        string.format("Ranks %d-%d: ", 64 * w, 64 * w + 63))
    end
  else
    local ci = t:add(f.count, tvb(13, 1))
    if count ~= pop then ci:add_proto_expert_info(e_count) end
    t:add(f.bitmap, tvb(14, 8))
  end

  local avail = math.min(n, math.floor((len - hlen) / ELEMENT_BYTES))
  if avail > 0 then
    local et = t:add(fanin, tvb(hlen, avail * ELEMENT_BYTES), "Elements (" .. avail .. ")")
    for i = 0, avail - 1 do
      et:add(f.element, tvb(hlen + i * ELEMENT_BYTES, ELEMENT_BYTES))
    end
  end

  pinfo.cols.info = string.format("%s%s job=%d block=%d count=%d elements=%d exp=%d",
    types[ptype] or ("type " .. ptype), v2 and " v2" or "", job, block, count, n, tvb(3, 1):int())
  return len
end

local function heuristic(tvb, pinfo, tree)
  local len = tvb:len()
  if len < HEADER_LEN then return false end
  if tvb(0, 1):uint() == VERSION_2 then
    if len < HEADER_LEN_V2 or types[tvb(1, 1):uint()] == nil then return false end
    if len ~= HEADER_LEN_V2 + ELEMENT_BYTES * tvb(6, 2):uint() then return false end
    fanin.dissector(tvb, pinfo, tree)
    return true
  end
  if tvb(0, 1):uint() ~= VERSION then return false end
  local ptype = tvb(1, 1):uint()
  if kv_types[ptype] ~= nil and len == HEADER_LEN + KV_TUPLE_BYTES * tvb(6, 2):uint() then
    fanin.dissector(tvb, pinfo, tree)
    return true
  end
  if types[ptype] == nil then return false end
  if len ~= HEADER_LEN + ELEMENT_BYTES * tvb(6, 2):uint() then return false end
  fanin.dissector(tvb, pinfo, tree)
  return true
end

DissectorTable.get("udp.port"):add(FANIN_UDP_PORT, fanin)
fanin:register_heuristic("udp", heuristic)
