-- Rule: many small launches.
--
-- An operation that is launched thousands of times with kernels of a few
-- microseconds each spends much of its GPU time on per-launch overhead and
-- under-filled kernels, whatever its roofline says. Such an operation is
-- better batched (one larger launch), fused with its neighbours, or captured
-- in a GPU graph. This rule flags every operation signature launched at
-- least MIN_LAUNCHES times whose kernels average under SHORT_US. Kernels a
-- graph launch replays are not launches (one submission replays the whole
-- graph, and the loop already is a GPU graph): their rows are left out.
--
-- It is an example of the rule contract (docs/rules.md): select the rows of
-- unified_perf_summary the rule is about; the shared machinery computes
-- efficiency and impact; the rule says what to do.
local rule = require "tracelens.rule"
local say = require "tracelens.prose"

local ctx = ...
local MIN_LAUNCHES = 100
local SHORT_US = 10

local replayed = rule.graph_replayed(ctx)
local function launches(row) return row.operation_count or 0 end

return rule.run(ctx, {
  noun = function() return "small-launch operation" end,

  select = function(row)
    local mean = row["Kernel Time (µs)_mean"]
    return launches(row) >= MIN_LAUNCHES and type(mean) == "number" and mean < SHORT_US and not replayed(row)
  end,

  title = function(v)
    return string.format("Operation launched %d times with kernels under %d µs", v.lead.count or 0, SHORT_US)
  end,

  identify = function(v)
    return { string.format("Each launch runs kernels averaging under %d µs, so launch overhead and partly "
      .. "filled kernels dominate its GPU time.", SHORT_US) }
  end,

  advice = function(v)
    return {
      { action = "Batch the repeated calls upstream into fewer, larger launches, or capture the loop in a GPU graph.",
        mechanism = "One larger launch amortises the fixed per-launch cost and fills the device; a GPU graph "
          .. "replays the whole sequence with a single submission." },
      say.remedy.defer_fusion(v, "its parent module"),
    }
  end,
})
