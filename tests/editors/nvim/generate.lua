-- The Neovim side of tests/editors/test_neovim.py, run after the documented config (docs/editors.md).
-- Opens the stub, runs the code action the way a user does (vim.lsp.buf.code_action + vim.ui.select),
-- waits for the edit, writes the file, and reports what it saw as JSON; exits with :cquit on failure.
local report_path = assert(os.getenv('PYCAPSULE_NVIM_REPORT'), 'PYCAPSULE_NVIM_REPORT is not set')
local stub_line = assert(tonumber(os.getenv('PYCAPSULE_NVIM_LINE')), 'PYCAPSULE_NVIM_LINE is not set')
local expected = assert(os.getenv('PYCAPSULE_NVIM_EXPECT'), 'PYCAPSULE_NVIM_EXPECT is not set')
local timeout_ms = 120000

local report = { offered = {}, progress = {}, statuses = {}, statusline = {}, step = 'start' }

local function write_report()
  local file = assert(io.open(report_path, 'w'))
  file:write(vim.json.encode(report))
  file:close()
end

local function fail(message)
  report.error = ('%s: %s'):format(report.step, message)
  write_report()
  vim.cmd('cquit! 1')
end

vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(event)
    local value = event.data.params.value
    if type(value) == 'table' then
      table.insert(report.progress, { kind = value.kind, title = value.title, message = value.message })
    end
  end,
})

local function run()
  report.step = 'wait for the server'
  local client
  if not vim.wait(30000, function()
    client = vim.lsp.get_clients({ bufnr = 0, name = 'pycapsule' })[1]
    return client ~= nil and client.initialized
  end, 50) then
    return fail('pycapsule did not attach to the buffer')
  end
  -- Record the status notifications while keeping the documented handler.
  local documented = client.handlers['pycapsule/status']
  client.handlers['pycapsule/status'] = function(err, status, ctx)
    table.insert(report.statuses, status)
    documented(err, status, ctx)
    table.insert(report.statusline, vim.g.pycapsule_status)
  end

  report.step = 'code action'
  vim.api.nvim_win_set_cursor(0, { stub_line, 4 })
  local chosen = false
  vim.ui.select = function(items, _, on_choice)
    for index, item in ipairs(items) do
      local title = item.action and item.action.title or item.title
      table.insert(report.offered, title)
      if title == 'Generate & self-debug' then
        chosen = true
        return on_choice(item, index)
      end
    end
    on_choice(nil, nil)
  end
  vim.lsp.buf.code_action()
  if not vim.wait(10000, function() return chosen end, 50) then
    return fail('"Generate & self-debug" was not offered; offered: ' .. vim.inspect(report.offered))
  end

  report.step = 'wait for the edit'
  local function buffer_text()
    return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  end
  if not vim.wait(timeout_ms, function() return buffer_text():find(expected, 1, true) ~= nil end, 100) then
    return fail('the body never arrived; buffer:\n' .. buffer_text())
  end
  report.step = 'wait for the end of the run'
  vim.wait(10000, function()
    local last_progress = report.progress[#report.progress]
    local last_status = report.statuses[#report.statuses]
    return last_progress ~= nil and last_progress.kind == 'end' and last_status ~= nil and last_status.state ~= 'generating'
  end, 50)
  report.buffer = buffer_text()

  report.step = 'hover'
  local name_column = vim.api.nvim_buf_get_lines(0, stub_line - 1, stub_line, false)[1]:find('digit_sum', 1, true)
  vim.api.nvim_win_set_cursor(0, { stub_line, name_column })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local answers = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 10000) or {}
  for _, answer in pairs(answers) do
    if answer.result and answer.result.contents then
      report.hover = answer.result.contents.value or vim.inspect(answer.result.contents)
    end
  end

  report.step = 'write'
  vim.cmd('write')
  write_report()
  vim.cmd('qall!')
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  fail(err)
end
