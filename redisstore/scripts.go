package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server; each is one round trip (EVALSHA) on keys of
// one slot: the block script on the tenant's figures (all under the prefix, one hash tag in
// a cluster), the others on a single key each.
//
// A figure key (a budget day or a quota period) is a hash: s (spent), r (reserved by the
// blocks replicas hold), x (present when the figures were lost: no block is granted from it
// any more), and one field kID per block, "GRANTED SPENT SWEPT": what Redis granted the
// block in all, what its holder last reported spent, and 1 once it was charged as spent.
// The zset bx scores every live block "ID|KEY" by its expiry; every run of the block script
// charges expired blocks as spent in full. The field v counts the writes to a figure key: a
// replica that saw v and finds it lower knows Redis lost writes it saw (a failover to a
// replica that missed them), even with the epoch key intact. The epoch key E (it outlives every figure key) is "CREATED:LOSTAT" (ms): a
// replica that knew an epoch and finds E gone, or re-created without LOSTAT, knows Redis
// lost its figures.

// Block: KEYS figure key, bx, E. ARGV now(ms), deadline(server µs, 0 none), known epoch,
// block id ("" none), spent (cumulative), add (wanted), need, want (demandWindow of demand),
// limit, block expiry(ms), key ttl(ms), period start(ms), mode ('r' renew and refill, 'x'
// return), id for a new block (the replica keeps it until a reply names it: a block of that
// id granted before, whose reply was lost, is adopted), unit (the replica's call size), the block's free part now,
// the figure key's write count v last seen (0 none).
// Reply {code, id, granted, reported, s, r, server time(µs), epoch, v}; {codeLate, server time} when late.
const luaBlock = `
local t = redis.call('TIME')
local srv = tonumber(t[1]) * 1000000 + tonumber(t[2])
local dl = tonumber(ARGV[2])
if dl > 0 and srv > dl then return {6, srv} end
local K, bx, E = KEYS[1], KEYS[2], KEYS[3]
local now = tonumber(ARGV[1])
local function f(x) return string.format('%.17g', x) end
local function rec(k, id)
  local v = redis.call('HGET', k, 'k' .. id)
  if not v then return nil end
  local g, sp, sw = string.match(v, '^(%S+) (%S+) (%S+)$')
  return tonumber(g), tonumber(sp), sw == '1'
end
local function fig(k)
  local v = redis.call('HMGET', k, 's', 'r')
  return tonumber(v[1]) or 0, tonumber(v[2]) or 0
end
-- the epoch: detect lost figures
local known = ARGV[3]
local e = redis.call('GET', E)
local lost = false
if known ~= '' and (not e or (e ~= known and string.match(e, ':0$'))) then
  e = ARGV[1] .. ':' .. ARGV[1]
  redis.call('SET', E, e)
  lost = true
elseif not e then
  e = ARGV[1] .. ':0'
  redis.call('SET', E, e)
end
if redis.call('PTTL', E) < tonumber(ARGV[11]) then redis.call('PEXPIRE', E, ARGV[11]) end
local lostAt = tonumber(string.match(e, ':(%d+)$')) or 0
-- sweep: expired blocks are charged as spent in full
local dead = redis.call('ZRANGEBYSCORE', bx, '-inf', now, 'LIMIT', 0, 64)
for _, m in ipairs(dead) do
  local id, k = string.match(m, '^([^|]*)|(.*)$')
  local g, sp, sw = rec(k, id)
  if g and not sw then
    local s, r = fig(k)
    redis.call('HSET', k, 's', f(s + g - sp), 'r', f(math.max(r - (g - sp), 0)), 'k' .. id, f(g) .. ' ' .. f(g) .. ' 1')
  end
  redis.call('ZREM', bx, m)
end
local seen = tonumber(ARGV[17]) or 0
if redis.call('EXISTS', K) == 0 then
  redis.call('HSET', K, 's', 0, 'r', 0, 'v', 0)
  redis.call('PEXPIRE', K, ARGV[11])
  if lostAt > tonumber(ARGV[12]) or seen > 0 then lost = true end
end
local v = tonumber(redis.call('HGET', K, 'v')) or 0
if v < seen then lost = true end -- writes this replica saw are gone
if lost then redis.call('HSET', K, 'x', 1) end
local s, r = fig(K)
if redis.call('HEXISTS', K, 'x') == 1 then
  return {7, '', '0', '0', f(s), f(r), srv, e, math.max(v, seen)}
end
v = v + 1
local id = ARGV[4]
local S = tonumber(ARGV[5])
local g, sp, sw = nil, 0, false
if id ~= '' then g, sp, sw = rec(K, id) end
if g and not sw then
  local d = S - sp
  if d > 0 then
    s = s + d
    r = math.max(r - math.min(d, g - sp), 0)
    sp = S
    if S > g then g = S end
  end
else
  if g then redis.call('HDEL', K, 'k' .. id) end
  id = ARGV[14]
  -- a new block this replica asked for before without hearing the answer: adopt it
  g, sp, sw = rec(K, id)
  if not g or sw then g, sp = 0, 0 end
end
if ARGV[13] == 'x' then
  r = math.max(r - (g - sp), 0)
  redis.call('HSET', K, 's', f(s), 'r', f(r), 'v', v)
  redis.call('HDEL', K, 'k' .. id)
  redis.call('ZREM', bx, id .. '|' .. K)
  return {0, '', '0', '0', f(s), f(r), srv, e, v}
end
local L = tonumber(ARGV[9])
local add, need, want = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local mine = g - sp
local others = math.max(r - mine, 0)
local share = L - s
if want + others > 0 then share = (L - s) * want / (want + others) end
local grant = math.min(add, share - mine)
grant = math.max(grant, need)
grant = math.min(grant, L - s - r)
-- whole calls: the block's free part a multiple of the replica's call size, so that blocks
-- do not strand fractions of a call between replicas at the end of a period
local unit, have = tonumber(ARGV[15]), tonumber(ARGV[16])
if unit > 0 and grant > 0 then
  local aligned = math.floor((have + grant) / unit + 1e-9) * unit - have
  if aligned >= need and aligned >= 0 then grant = aligned end
end
if grant < 0 then grant = 0 end
g = g + grant
r = r + grant
redis.call('HSET', K, 's', f(s), 'r', f(r), 'k' .. id, f(g) .. ' ' .. f(sp) .. ' 0', 'v', v)
redis.call('PEXPIRE', K, ARGV[11])
redis.call('ZADD', bx, ARGV[10], id .. '|' .. K)
redis.call('PEXPIRE', bx, tonumber(ARGV[10]) - now + 86400000)
return {0, id, f(g), f(sp), f(s), f(r), srv, e, v}
`

// Reply codes of the scripts.
const (
	codeGranted = iota
	codeCached
	codePrior
	codeBudget
	codeQuota
	codeHold
	codeLate // the call arrived after its caller gave up: nothing done
	codeLost // the figures were lost: no block is granted from them
)

// Request: KEYS the request id's key. ARGV engine, request window(ms). Claims the id for
// the engine unless an answer or a call of it is known. Reply {code, value}: codeGranted
// (claimed), or codePrior with the first text answer, or this engine's own entry.
const luaRequest = `
local all = redis.call('HGETALL', KEYS[1])
local mine = false
for i = 1, #all, 2 do
  local v = all[i + 1]
  if string.sub(v, 1, 1) == 'T' then return {2, v} end
  if all[i] == ARGV[1] then mine = v end
end
if mine then return {2, mine} end
redis.call('HSET', KEYS[1], ARGV[1], '')
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {0, ''}
`

// Answer: KEYS the request id's key. ARGV engine, answer, ttl(ms) when it must be created
// (a claim made while Redis was unreachable; 0: only while the key exists).
const luaAnswer = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  if tonumber(ARGV[3]) <= 0 then return 0 end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
if ARGV[2] == '' then redis.call('HSETNX', KEYS[1], ARGV[1], '') else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
`

// Hold: KEYS the hold key. ARGV "KIND:UNTILMS", until(ms), ttl(ms). A hold never shortens a
// longer one.
const luaHold = `
local h = redis.call('GET', KEYS[1])
local u = h and tonumber(string.match(h, ':(%d+)$'))
if not (u and u >= tonumber(ARGV[2])) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) end
return 1
`

type scripts struct{ block, request, answer, hold *redis.Script }

func newScripts() scripts {
	return scripts{
		block:   redis.NewScript(luaBlock),
		request: redis.NewScript(luaRequest),
		answer:  redis.NewScript(luaAnswer),
		hold:    redis.NewScript(luaHold),
	}
}
