package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server; each is one round trip (EVALSHA). Counters are
// touched only while their key exists, so a late Settle never re-creates a key without its
// expiry. A lease is a token (see lease) in the zset lx scored by its expiry; the sweep in
// every Admit charges expired leases as spent and moves them to ls, where a late Settle
// still finds them and corrects the charge to what the call cost.
const luaCommon = `
local function neg(x)
  if string.sub(x, 1, 1) == '-' then return string.sub(x, 2) end
  return '-' .. x
end
local function addf(key, field, x)
  if key ~= '' and x ~= '0' and redis.call('EXISTS', key) == 1 then
    redis.call('HINCRBYFLOAT', key, field, x)
  end
end
local function addi(key, field, n)
  if key ~= '' and n ~= 0 and redis.call('EXISTS', key) == 1 then
    redis.call('HINCRBY', key, field, n)
  end
end
local function ensure(key, ttl)
  if key ~= '' and redis.call('EXISTS', key) == 0 then
    redis.call('HSET', key, 's', 0)
    redis.call('PEXPIRE', key, ttl)
  end
end
-- settle applies the settlement of lease tok once: 1 when it did, 0 when it was settled before.
local function settle(lx, ls, tok, l, sent, c, n)
  if redis.call('ZREM', lx, tok) == 1 then
    addf(l.b, 'r', neg(l.c)); addi(l.q, 'r', -l.n)
  elseif redis.call('ZREM', ls, tok) == 1 then
    addf(l.b, 's', neg(l.c)); addi(l.q, 's', -l.n)
  else
    return 0
  end
  if sent then addf(l.b, 's', c); addi(l.q, 's', n) end
  return 1
end
local function sweep(lx, ls, now)
  local dead = redis.call('ZRANGEBYSCORE', lx, '-inf', now, 'LIMIT', 0, 64)
  for _, tok in ipairs(dead) do
    local l = cjson.decode(tok)
    addf(l.b, 'r', neg(l.c)); addf(l.b, 's', l.c)
    addi(l.q, 'r', -l.n); addi(l.q, 's', l.n)
    redis.call('ZREM', lx, tok)
    redis.call('ZADD', ls, now, tok)
  end
  if #dead > 0 then
    redis.call('ZREMRANGEBYSCORE', ls, '-inf', now - 3600000)
    redis.call('PEXPIRE', ls, 86400000)
  end
end
`

// Admit: KEYS lx, ls, cache, request, hold, budget, quota (the placeholder key when unused).
// ARGV now(ms), deadline(server µs, 0 none), engine, token, credits, daily, chars, quota,
// lease expiry(ms), request window(ms), budget ttl(ms), quota ttl(ms), quota period end(ms),
// placeholder key.
// Reply {code, value, budget spent, budget reserved, quota spent, quota reserved, until(ms),
// server time(µs)}; codes below.
const luaAdmit = luaCommon + `
local t = redis.call('TIME')
local srv = tonumber(t[1]) * 1000000 + tonumber(t[2])
local dl = tonumber(ARGV[2])
if dl > 0 and srv > dl then return {6, '', '0', '0', 0, 0, 0, srv} end
local none = ARGV[14]
local function reply(code, v, untilms)
  local b = redis.call('HMGET', KEYS[6], 's', 'r')
  local q = {false, false}
  if KEYS[7] ~= none then q = redis.call('HMGET', KEYS[7], 's', 'r') end
  return {code, v, b[1] or '0', b[2] or '0', tonumber(q[1]) or 0, tonumber(q[2]) or 0, untilms, srv}
end
local now = tonumber(ARGV[1])
sweep(KEYS[1], KEYS[2], now)
if KEYS[3] ~= none then
  local v = redis.call('GET', KEYS[3])
  if v then return reply(1, v, 0) end
end
local engine = ARGV[3]
if KEYS[4] ~= none then
  local all = redis.call('HGETALL', KEYS[4])
  local mine = false
  for i = 1, #all, 2 do
    local v = all[i + 1]
    if string.sub(v, 1, 1) == 'T' then return reply(2, v, 0) end
    if all[i] == engine then mine = v end
  end
  if mine then return reply(2, mine, 0) end
end
local h = redis.call('GET', KEYS[5])
if h then return reply(5, h, 0) end
local daily = tonumber(ARGV[6])
if daily > 0 then
  local b = redis.call('HMGET', KEYS[6], 's', 'r')
  if (tonumber(b[1]) or 0) + (tonumber(b[2]) or 0) + tonumber(ARGV[5]) > daily + 1e-9 then
    return reply(3, '', 0)
  end
end
local chars = tonumber(ARGV[7])
if KEYS[7] ~= none then
  local q = redis.call('HMGET', KEYS[7], 's', 'r')
  if (tonumber(q[1]) or 0) + (tonumber(q[2]) or 0) + chars > tonumber(ARGV[8]) then
    return reply(4, '', tonumber(ARGV[13]))
  end
end
if KEYS[4] ~= none then
  redis.call('HSET', KEYS[4], engine, '')
  if redis.call('PTTL', KEYS[4]) < 0 then redis.call('PEXPIRE', KEYS[4], ARGV[10]) end
end
redis.call('HINCRBYFLOAT', KEYS[6], 'r', ARGV[5])
redis.call('PEXPIRE', KEYS[6], ARGV[11])
if KEYS[7] ~= none then
  redis.call('HINCRBY', KEYS[7], 'r', chars)
  redis.call('PEXPIRE', KEYS[7], ARGV[12])
end
redis.call('ZADD', KEYS[1], ARGV[9], ARGV[4])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[9]) - now + 86400000)
return reply(0, '', 0)
`

// Reply codes of the Admit script.
const (
	codeGranted = iota
	codeCached
	codePrior
	codeBudget
	codeQuota
	codeHold
	codeLate // the call arrived after its caller gave up: nothing done
)

// Settle: KEYS lx, ls, cache. ARGV token, sent(0/1), credits, chars, answer, cache ttl(ms),
// placeholder key. Reply 1 when it settled, 0 when the lease was settled before.
const luaSettle = luaCommon + `
local tok = ARGV[1]
local l = cjson.decode(tok)
local done = settle(KEYS[1], KEYS[2], tok, l, ARGV[2] == '1', ARGV[3], tonumber(ARGV[4]))
local a = ARGV[5]
if a ~= '' and l.r ~= '' and redis.call('EXISTS', l.r) == 1 then redis.call('HSET', l.r, l.e, a) end
if string.sub(a, 1, 1) == 'T' and KEYS[3] ~= ARGV[7] and tonumber(ARGV[6]) > 0 then
  redis.call('SET', KEYS[3], a, 'PX', ARGV[6])
end
return done
`

// Push applies what a Client did while Redis was unreachable, in this order: adopt local
// leases still in flight as Redis leases ("a"), settle leases ("s"), add spend made from the
// local share ("l"), holds ("h") and request-id answers ("r"). Ops "a" and "l" carry a guard
// key so a push that timed out and is sent again applies them once; the others are
// idempotent. KEYS lx, ls. ARGV the ops as a JSON array.
const luaPush = luaCommon + `
local function once(g)
  return redis.call('SET', g, '1', 'NX', 'PX', 3600000)
end
local ops = cjson.decode(ARGV[1])
for _, o in ipairs(ops) do
  if o.o == 'a' then
    if once(o.g) then
      local l = cjson.decode(o.t)
      ensure(l.b, o.bt); ensure(l.q, o.qt)
      addf(l.b, 'r', l.c); addi(l.q, 'r', l.n)
      redis.call('ZADD', KEYS[1], o.x, o.t)
      redis.call('PEXPIRE', KEYS[1], 86400000 + o.lt)
      if l.r ~= '' and o.rt > 0 then
        redis.call('HSETNX', l.r, l.e, '')
        if redis.call('PTTL', l.r) < 0 then redis.call('PEXPIRE', l.r, o.rt) end
      end
    end
  elseif o.o == 's' then
    settle(KEYS[1], KEYS[2], o.t, cjson.decode(o.t), o.x == 1, o.c, o.n)
  elseif o.o == 'l' or o.o == 'm' then
    if once(o.g) then
      ensure(o.k, o.kt)
      if o.o == 'l' then addf(o.k, 's', o.c) else addi(o.k, 's', o.n) end
    end
  elseif o.o == 'h' then
    local h = redis.call('GET', o.k)
    local u = h and tonumber(string.match(h, ':(%d+)$'))
    if not (u and u >= o.u) then redis.call('SET', o.k, o.v, 'PX', o.p) end
  elseif o.o == 'r' then
    redis.call('HSET', o.k, o.e, o.a)
    if redis.call('PTTL', o.k) < 0 then redis.call('PEXPIRE', o.k, o.p) end
  end
end
return #ops
`

type scripts struct{ admit, settle, push *redis.Script }

func newScripts() scripts {
	return scripts{
		admit:  redis.NewScript(luaAdmit),
		settle: redis.NewScript(luaSettle),
		push:   redis.NewScript(luaPush),
	}
}
