/**
 * The Lua scripts that make each step of a world one atomic operation in Redis, whichever replica runs it.
 *
 * A world is one hash, `<prefix>w:<world>`, holding only what the world changed beside the fixtures every
 * replica loads (the seed). For an order with key K:
 *   s:K  its status, when not the seed's;       r:K  its record's JSON, when not the seed's;
 *   a:K  its place among orders added after the seed's;   x:K  set when a seed order was removed;
 *   g:K  the place an added order had when it was removed (kept so that a control page after K goes on
 *        from there), until K is added again or it is among the oldest of too many removed (see TIDY).
 * Places count from 1 and are never reused (`n` is the last given). Beside the hash, the sorted set
 * `<hash>:added` holds the added orders there now by place, and `<hash>:gone` the ids with a g:K field
 * by place: a control page reads the added orders after a place without passing removed ones, and the
 * oldest removed ids are let go, so a world's keys hold what it holds now, not its history. `na` is how
 * many added orders are there and `nx` how many seed orders were removed.
 * `nc` counts the differences from the seed as memory mode does (see `differences`), so that a session's
 * summary reads a few fields, never the hash. `nb` is what the world's records hold, counted as memory
 * mode counts its orders (see `weight`): a write that would grow it past --max-memory is refused.
 * `v` changes whenever a record is added, replaced or removed (not on a status change, which no list body
 * shows): replicas keep a world's list body until `v` moves. `v` comes from `<prefix>clock`, which only
 * grows, so a version is never reused after a reset. `b` is the behaviour as JSON.
 *
 * Sessions are also listed in the sorted set `<prefix>sessions` (score: last use, in ms), and by name in
 * `<prefix>session-names` (every score 0, read by ZRANGEBYLEX) for control pages keyed by name; a
 * session's hash and journal expire after the idle time, renewed on each use.
 *
 * Each script takes KEYS[1] = the world's hash. The seed is not in Redis, so scripts that need an order's
 * seed status are given it: ARGV "seed" is the status in this replica's fixtures, or "" when it has none.
 */

/** Shared by scripts: whether the order is there, and its status. */
const LOOKUP = `
local function lookup(world, key, seedStatus)
  local added = redis.call('HEXISTS', world, 'a:' .. key) == 1
  if not added and (seedStatus == '' or redis.call('HEXISTS', world, 'x:' .. key) == 1) then
    return nil, added
  end
  return redis.call('HGET', world, 's:' .. key) or seedStatus, added
end
local function keep(world, ttl)
  if tonumber(ttl) > 0 then
    redis.call('PEXPIRE', world, ttl)
    redis.call('PEXPIRE', world .. ':added', ttl)
    redis.call('PEXPIRE', world .. ':gone', ttl)
  end
end
-- How many differences from the seed an order makes, as memory mode counts them: its seed place changed or
-- removed, and its place among the added (a seed order removed and added again makes two).
local function differences(world, key)
  local s, r, x, a = unpack(redis.call('HMGET', world, 's:' .. key, 'r:' .. key, 'x:' .. key, 'a:' .. key))
  if a then return x and 2 or 1 end
  return (x or s or r) and 1 or 0
end
-- Keeps 'nc' the number of differences from the seed, told this order's count before the change.
local function recount(world, key, before)
  local now = differences(world, key)
  if now ~= before then redis.call('HINCRBY', world, 'nc', now - before) end
end
-- What a record costs a world, about, as memory mode counts an order (store.ts): its key and JSON as
-- strings, the entry, and its bytes in a replica's list body. A record that is not there costs nothing.
local function weight(key, json)
  if not json then return 0 end
  return 2 * (#key + #json) + #json + 320
end
-- How much more the world's records would hold with this record in place of the one it has for key.
local function growth(world, key, json)
  return weight(key, json) - weight(key, redis.call('HGET', world, 'r:' .. key))
end
-- Adds to what the world's records hold, as the integer HINCRBY takes (never '-0').
local function weigh(world, more)
  if more ~= 0 then redis.call('HINCRBY', world, 'nb', string.format('%d', more)) end
end
-- Whether the world's records may grow by this much (most < 0: no bound).
local function fits(world, more, most)
  most = tonumber(most)
  return more <= 0 or most < 0 or tonumber(redis.call('HGET', world, 'nb') or '0') + more <= most
end
`;

/** Shared by scripts that list sessions: names taken out of both indexes, a bounded number per command. */
const FORGET = `
local function forget(lru, names, gone)
  for i = 1, #gone, 1000 do
    local chunk = {unpack(gone, i, math.min(i + 999, #gone))}
    redis.call('ZREM', lru, unpack(chunk))
    redis.call('ZREM', names, unpack(chunk))
  end
end
`;

/**
 * KEYS: world, sessions, journal, session names. ARGV: session name, now, ttl, max sessions, key prefix.
 * A session's use: its keys live another ttl, it becomes the most recent, and past the maximum the least
 * recently used sessions are evicted, whichever replica used them.
 */
export const TOUCH = `${FORGET}
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[1] .. ':added', ttl)
redis.call('PEXPIRE', KEYS[1] .. ':gone', ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
forget(KEYS[2], KEYS[4], redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (tonumber(ARGV[2]) - ttl)))
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #gone, 2 do
    redis.call('ZREM', KEYS[4], gone[i])
    local world = ARGV[5] .. 'w:s:' .. gone[i]
    redis.call('DEL', world, world .. ':added', world .. ':gone', ARGV[5] .. 'j:s:' .. gone[i])
  end
end
return 1
`;

/**
 * KEYS: sessions, session names. ARGV: idle since (ms; older uses are gone), after ('' from the start),
 * limit, most names looked at, key prefix. A page of live sessions in name order, read only: names of
 * sessions gone idle that no use has taken out yet are skipped, within the look's bound. Returns
 * {live sessions in all, the name to go on after or '', then name, last use, na, nx, nc for each}.
 */
export const SESSIONS_PAGE = `
local since, limit, most = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[4])
local from = '-'
if ARGV[2] ~= '' then from = '(' .. ARGV[2] end
local page, found, looked, last, more = {}, 0, 0, '', false
while found < limit and looked < most do
  local names = redis.call('ZRANGEBYLEX', KEYS[2], from, '+', 'LIMIT', 0, math.min(limit - found, most - looked))
  if #names == 0 then break end
  for _, name in ipairs(names) do
    looked = looked + 1
    last = name
    local used = redis.call('ZSCORE', KEYS[1], name)
    if used and tonumber(used) >= since then
      local counts = redis.call('HMGET', ARGV[5] .. 'w:s:' .. name, 'na', 'nx', 'nc')
      page[#page + 1] = name
      page[#page + 1] = used
      for i = 1, 3 do page[#page + 1] = counts[i] or '0' end
      found = found + 1
    end
  end
  from = '(' .. last
end
if last ~= '' and #redis.call('ZRANGEBYLEX', KEYS[2], '(' .. last, '+', 'LIMIT', 0, 1) > 0 then more = true end
local total = redis.call('ZCOUNT', KEYS[1], since, '+inf')
local answer = {total, more and last or ''}
for i = 1, #page do answer[#answer + 1] = page[i] end
return answer
`;

/**
 * KEYS: world. ARGV: operation, ttl (0: the default world, which never expires).
 * Takes one use of the first rule for the operation. Returns {delayMs, rule JSON or ''}.
 */
export const TAKE_RULE = `
local found = redis.call('HGET', KEYS[1], 'b')
if not found then return {0, ''} end
local behaviour = cjson.decode(found)
local delay = behaviour.delayMs or 0
if type(behaviour.rules) ~= 'table' then return {delay, ''} end
for index, rule in ipairs(behaviour.rules) do
  if rule.operation == ARGV[1] then
    local taken = cjson.encode(rule)
    if type(rule.times) == 'number' then
      if rule.times <= 1 then table.remove(behaviour.rules, index) else rule.times = rule.times - 1 end
      local rest = '{"delayMs":' .. delay .. ',"rules":[]}'
      if #behaviour.rules > 0 then rest = cjson.encode(behaviour) end
      redis.call('HSET', KEYS[1], 'b', rest)
      if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    end
    return {delay, taken}
  end
end
return {delay, ''}
`;

/**
 * KEYS: world. ARGV: key, seed status, ttl, then the cancel rule as lines "from outcome to", one per
 * status, written by order-status.ts's cancelTransition: the rule itself is never restated here.
 * Returns the outcome.
 */
export const CANCEL = `${LOOKUP}
local status = lookup(KEYS[1], ARGV[1], ARGV[2])
if not status then return 'not_found' end
for i = 4, #ARGV do
  local from, outcome, to = string.match(ARGV[i], '^(%S+) (%S+) (%S+)$')
  if from == status then
    if to ~= status then
      local before = differences(KEYS[1], ARGV[1])
      redis.call('HSET', KEYS[1], 's:' .. ARGV[1], to)
      recount(KEYS[1], ARGV[1], before)
      keep(KEYS[1], ARGV[3])
    end
    return outcome
  end
end
return redis.error_reply('no cancel rule for status ' .. status)
`;

/** KEYS: world. ARGV: key, seed status, ttl, new status. Returns 1, or 0 when there is no such order. */
export const SET_STATUS = `${LOOKUP}
if not lookup(KEYS[1], ARGV[1], ARGV[2]) then return 0 end
local before = differences(KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], 's:' .. ARGV[1], ARGV[4])
recount(KEYS[1], ARGV[1], before)
keep(KEYS[1], ARGV[3])
return 1
`;

/**
 * Shared by the scripts that change what a list shows. A list read under way on some replica
 * (redis-list.ts) registers a key of its own in `<hash>:readers` (score: when it expires, in Redis's clock);
 * before a write changes a field a list shows, it saves the field's value in each reader's key unless saved
 * already ('' for none), so that each read sees the world as it was when it began without a copy of it.
 */
const LIST_READERS = `
local function readers(world)
  local list = world .. ':readers'
  local now = redis.call('TIME')
  redis.call('ZREMRANGEBYSCORE', list, '-inf', '(' .. (now[1] * 1000 + math.floor(now[2] / 1000)))
  return redis.call('ZRANGE', list, 0, -1, 'WITHSCORES')
end
local function saving(world, key)
  local keys = readers(world)
  if #keys == 0 then return end
  local fields = {'a:' .. key, 'r:' .. key, 'x:' .. key}
  local values = redis.call('HMGET', world, unpack(fields))
  for at = 1, #keys, 2 do
    for i, field in ipairs(fields) do redis.call('HSETNX', keys[at], field, values[i] or '') end
    -- Gone when its read would be, were its replica to end during it.
    redis.call('PEXPIREAT', keys[at], keys[at + 1])
  end
end
`;

/**
 * KEYS: world, the reader's key. ARGV: how long the read may take (ms). Registers a list read, its key
 * emptied; returns the world's version it will show.
 */
export const LIST_BEGIN = `
local now = redis.call('TIME')
local ms = now[1] * 1000 + math.floor(now[2] / 1000)
redis.call('DEL', KEYS[2])
redis.call('ZADD', KEYS[1] .. ':readers', ms + tonumber(ARGV[1]), KEYS[2])
redis.call('PEXPIRE', KEYS[1] .. ':readers', ARGV[1])
return redis.call('HGET', KEYS[1], 'v') or '0'
`;

/**
 * Shared by the scripts that write orders: `put` replaces an order where it stands or appends it, `drop`
 * removes it (1, or 0 when there is no such order). Neither checks the room; neither renews the expiry.
 */
const WRITE = `${LOOKUP}${LIST_READERS}
local function put(world, clock, key, seedStatus, status, json)
  saving(world, key)
  local found = lookup(world, key, seedStatus)
  local before = differences(world, key)
  local outcome = 'replaced'
  if not found then
    outcome = 'created'
    local place = redis.call('HINCRBY', world, 'n', 1)
    redis.call('HSET', world, 'a:' .. key, place)
    redis.call('ZADD', world .. ':added', place, key)
    redis.call('HDEL', world, 'g:' .. key)
    redis.call('ZREM', world .. ':gone', key)
    redis.call('HINCRBY', world, 'na', 1)
  end
  weigh(world, growth(world, key, json))
  redis.call('HSET', world, 's:' .. key, status, 'r:' .. key, json, 'v', redis.call('INCR', clock))
  recount(world, key, before)
  return outcome
end
-- Removed ids remembered as cursors (g:K) are let go oldest first once they outnumber the added orders
-- there (and 64): a few per removal, so each removal pays a bounded step and they stay within a bounded
-- multiple of what the world holds, as in memory (store.ts). A page after a forgotten id asks to start again.
local function tidy(world, added)
  local over = redis.call('ZCARD', world .. ':gone') - math.max(64, added)
  if over <= 0 then return end
  local forgotten = redis.call('ZPOPMIN', world .. ':gone', math.min(over, 8))
  for i = 1, #forgotten, 2 do redis.call('HDEL', world, 'g:' .. forgotten[i]) end
end
local function drop(world, clock, key, seedStatus)
  local status, added = lookup(world, key, seedStatus)
  if not status then return 0 end
  saving(world, key)
  local before = differences(world, key)
  if added then
    local place = redis.call('HGET', world, 'a:' .. key)
    redis.call('HSET', world, 'g:' .. key, place)
    redis.call('ZREM', world .. ':added', key)
    redis.call('ZADD', world .. ':gone', place, key)
    tidy(world, redis.call('HINCRBY', world, 'na', -1))
  else
    redis.call('HSET', world, 'x:' .. key, 1)
    redis.call('HINCRBY', world, 'nx', 1)
  end
  weigh(world, 0 - weight(key, redis.call('HGET', world, 'r:' .. key)))
  redis.call('HDEL', world, 'a:' .. key, 's:' .. key, 'r:' .. key)
  redis.call('HSET', world, 'v', redis.call('INCR', clock))
  recount(world, key, before)
  return 1
end
`;

/**
 * KEYS: world, clock. ARGV: key, seed status, ttl, status, record JSON, most bytes (-1: no bound).
 * Replaces the order where it stands, or appends it. Returns 'created' or 'replaced', or 'full' (nothing
 * done) when the world's records would grow past the bound.
 */
export const PUT_ORDER = `${WRITE}
if not fits(KEYS[1], growth(KEYS[1], ARGV[1], ARGV[5]), ARGV[6]) then return 'full' end
local outcome = put(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[4], ARGV[5])
keep(KEYS[1], ARGV[3])
return outcome
`;

/** KEYS: world, clock. ARGV: key, seed status, ttl. Returns 1, or 0 when there is no such order. */
export const REMOVE_ORDER = `${WRITE}
local removed = drop(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
if removed == 1 then keep(KEYS[1], ARGV[3]) end
return removed
`;

/**
 * KEYS: world, clock. ARGV: ttl, most bytes (-1: no bound), how many to create (C), then key, seed
 * status, status and record JSON of each, then key and seed status of each id to remove. A control
 * batch as one step: the orders to create where no order has their key (the first of a key given twice),
 * then the removals. All or nothing: {'full'} when the orders to create would grow the world's records
 * past the bound; else {'done', how many created, the keys created, the keys removed}.
 */
export const BATCH = `${WRITE}
local count = tonumber(ARGV[3])
local fresh, seen, more = {}, {}, 0
for i = 4, 3 + count * 4, 4 do
  local key = ARGV[i]
  if not seen[key] and not lookup(KEYS[1], key, ARGV[i + 1]) then
    fresh[#fresh + 1] = i
    more = more + weight(key, ARGV[i + 3])
  end
  seen[key] = true
end
if not fits(KEYS[1], more, ARGV[2]) then return {'full'} end
local answer = {'done', #fresh}
for _, i in ipairs(fresh) do
  put(KEYS[1], KEYS[2], ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3])
  answer[#answer + 1] = ARGV[i]
end
for i = 4 + count * 4, #ARGV, 2 do
  if drop(KEYS[1], KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then answer[#answer + 1] = ARGV[i] end
end
keep(KEYS[1], ARGV[1])
return answer
`;

/**
 * KEYS: world, clock. ARGV: ttl. Back to the seed with no rules, under a version never used before. A list
 * read under way is told to start again: a reset changes more at once than is worth saving.
 */
export const RESET = `${LIST_READERS}
local list = readers(KEYS[1])
for at = 1, #list, 2 do
  redis.call('HSET', list[at], '!reset', 1)
  redis.call('PEXPIREAT', list[at], list[at + 1])
end
redis.call('DEL', KEYS[1], KEYS[1] .. ':added', KEYS[1] .. ':gone')
redis.call('HSET', KEYS[1], 'v', redis.call('INCR', KEYS[2]))
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`;

/** KEYS: world. ARGV: ttl, behaviour JSON ('' clears it). */
export const SET_BEHAVIOUR = `
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], 'b') else redis.call('HSET', KEYS[1], 'b', ARGV[2]) end
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`;

/** KEYS: journal. ARGV: ttl, capacity, entries' JSON, oldest first. Kept newest first; the oldest past the capacity go. */
export const RECORD = `
redis.call('LPUSH', KEYS[1], unpack(ARGV, 3))
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`;
