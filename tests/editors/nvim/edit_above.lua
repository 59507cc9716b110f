-- The Neovim side of test_neovim.py's issue-47 scenarios, run after the documented config: a stub above
-- a function whose doctest fails. Generates the stub (which moves the failing function down), then
-- - with PYCAPSULE_NVIM_TYPE=burst: types a word in a line outside both functions as the run starts;
-- - with PYCAPSULE_NVIM_TYPE=through: types there all through the run and a second past its end (so
--   Neovim often has a keystroke of its own not reported yet when the edit arrives);
-- - else: right after the edit, `gra` at the end of the failing example's new line, and takes the
--   "Self-debug" quick-fix.
-- Writes the file and reports what it saw (messages included) as JSON; exits with :cquit on failure.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local common = dofile(vim.fs.joinpath(here, 'common.lua'))
local report = common.report

local function setting(name)
  local value = os.getenv('PYCAPSULE_NVIM_' .. name)
  return value or common.fail('PYCAPSULE_NVIM_' .. name .. ' is not set')
end
local stub_line = assert(tonumber(setting('LINE')))
local body_line = setting('EXPECT')
local typing_line = setting('TYPING_LINE')
local failing_example = setting('FAILING')
local fixed = setting('FIXED')
local typing = os.getenv('PYCAPSULE_NVIM_TYPE') -- 'burst', 'through' or nil: no typing

local function line_of(needle)
  for index, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if line:find(needle, 1, true) then
      return index
    end
  end
  common.fail(('no %q in the buffer:\n%s'):format(needle, common.buffer_text()))
end

--- A keystroke every 100 ms at the end of the typing line while `typing_now(tick)` says so, until
--- `stop()` returns true.
local function type_until(typing_now, stop)
  local row = line_of(typing_line) - 1
  report.typed = 0
  local tick = 0
  local timer = assert(vim.uv.new_timer())
  timer:start(100, 100, vim.schedule_wrap(function()
    tick = tick + 1
    if stop(tick) then
      timer:stop()
      report.typing_done = true
    elseif typing_now(tick) then
      local column = #vim.api.nvim_buf_get_lines(0, row, row + 1, false)[1]
      vim.api.nvim_buf_set_text(0, row, column, row, column, { 'x' })
      report.typed = report.typed + 1
    end
  end))
end

common.main(function()
  common.client()

  report.step = 'the doctest diagnostic on the failing function'
  if not vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50) then
    common.fail('no diagnostic arrived')
  end

  report.step = 'generate the stub'
  vim.api.nvim_win_set_cursor(0, { stub_line, 4 })
  common.code_action('Generate & self-debug')
  if typing == 'burst' then
    -- a word typed at the start of the run; Neovim reports it once the user pauses (150 ms)
    type_until(function() return true end, function(tick) return tick > 10 end)
  elseif typing == 'through' then
    -- a keystroke, a pause (reported), then typing on through the end of the run and a second beyond
    local ended_at
    type_until(function(tick) return tick == 1 or tick > 4 end, function()
      if ended_at == nil and common.run_end('digit_sum') then
        ended_at = vim.uv.now()
      end
      return ended_at ~= nil and vim.uv.now() - ended_at > 1000
    end)
  end

  report.step = 'wait for the generated body'
  common.wait_for_text(body_line, 60)

  if not typing then
    report.step = 'gra on the failing example right after the edit above it'
    local row = line_of(failing_example)
    report.failing_line = row
    report.diagnostic_lines = vim.tbl_map(function(d) return d.lnum + 1 end, vim.diagnostic.get(0))
    vim.api.nvim_win_set_cursor(0, { row, #vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1] - 1 })
    common.code_action('Self-debug `twice` (doctests failing)')
    report.step = 'wait for the fixed body'
    common.wait_for_text(fixed, 60)
    if not vim.wait(10000, function() return common.run_end('twice') ~= nil end, 50) then
      common.fail('the self-debug run never ended')
    end
    report.fixed = common.run_end('twice').outcome
  end

  report.step = 'wait for the end of the run'
  if not vim.wait(30000, function()
    return common.run_end('digit_sum') ~= nil and (not typing or report.typing_done)
  end, 50) then
    common.fail('the run (or the typing) never ended')
  end
  report.generated = common.run_end('digit_sum').outcome
  vim.wait(500) -- a late answer or message after the run's end would arrive by now
  report.typing_line = vim.api.nvim_buf_get_lines(0, line_of(typing_line) - 1, line_of(typing_line), false)[1]
  report.buffer = common.buffer_text()

  report.step = 'write'
  vim.cmd('write')
  common.write()
  vim.cmd('qall!')
end)
