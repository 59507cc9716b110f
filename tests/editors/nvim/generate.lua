-- The Neovim side of tests/editors/test_neovim.py, run after the documented config (docs/editors.md).
-- Opens the stub, runs the code action the way a user does (vim.lsp.buf.code_action + vim.ui.select),
-- waits for the edit, writes the file, and reports what it saw as JSON; exits with :cquit on failure.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local common = dofile(vim.fs.joinpath(here, 'common.lua'))
local report = common.report
local stub_line = assert(tonumber(os.getenv('PYCAPSULE_NVIM_LINE')), 'PYCAPSULE_NVIM_LINE is not set')
local expected = assert(os.getenv('PYCAPSULE_NVIM_EXPECT'), 'PYCAPSULE_NVIM_EXPECT is not set')

common.main(function()
  local client = common.client()

  report.step = 'code action'
  vim.api.nvim_win_set_cursor(0, { stub_line, 4 })
  common.code_action('Generate & self-debug')

  report.step = 'wait for the edit'
  common.wait_for_text(expected, 120)
  report.step = 'wait for the end of the run'
  vim.wait(10000, function()
    local last_progress = report.progress[#report.progress]
    local last_status = report.statuses[#report.statuses]
    return last_progress ~= nil and last_progress.kind == 'end' and last_status ~= nil and last_status.state ~= 'generating'
  end, 50)
  report.buffer = common.buffer_text()

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
  common.write()
  vim.cmd('qall!')
end)
