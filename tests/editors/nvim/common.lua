-- What the Neovim drivers share: the JSON report, failing with :cquit, waiting for the pycapsule client,
-- the code-action menu answered by title (vim.lsp.buf.code_action + vim.ui.select, what `gra` runs), and
-- every message a user would be shown (vim.notify, window/showMessage, :messages).
local M = {}

M.report = { edits = {}, offered = {}, progress = {}, statuses = {}, statusline = {}, notified = {}, shown = {}, step = 'start' }
local report_path = assert(os.getenv('PYCAPSULE_NVIM_REPORT'), 'PYCAPSULE_NVIM_REPORT is not set')

function M.write()
  M.report.messages = vim.api.nvim_exec2('messages', { output = true }).output
  M.report.lsp_log = vim.lsp.log.get_filename()
  local file = assert(io.open(report_path, 'w'))
  file:write(vim.json.encode(M.report))
  file:close()
end

function M.fail(message)
  M.report.error = ('%s: %s'):format(M.report.step, message)
  M.write()
  vim.cmd('cquit! 1')
end

function M.buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
end

--- Runs `body` and fails the test with its traceback when it raises.
function M.main(body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    M.fail(err)
  end
end

vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(event)
    local value = event.data.params.value
    if type(value) == 'table' then
      table.insert(M.report.progress, { kind = value.kind, title = value.title, message = value.message })
    end
  end,
})

-- Every notification (Neovim shows LSP errors through vim.notify) and every window/showMessage, with
-- their levels, still shown as usual.
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(M.report.notified, { message = tostring(message), level = level or vim.log.levels.INFO })
  return notify(message, level, opts)
end
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(M.report.shown, { type = params.type, message = params.message })
  return show_message(err, params, ctx)
end

-- Every workspace/applyEdit: the version it was made for, the buffer's own when it arrived, whether Neovim
-- sent the edit's didChange before its answer (text_first), and the answer.
M.report.edits = {}
local in_edit = nil
local apply_edit = vim.lsp.handlers['workspace/applyEdit']
vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx)
  local change = (params.edit.documentChanges or {})[1]
  in_edit = { version = change and change.textDocument.version, buffer = vim.lsp.util.buf_versions[vim.fn.bufnr()],
              text_first = false }
  local answer = apply_edit(err, params, ctx)
  in_edit.applied = answer.applied
  table.insert(M.report.edits, in_edit)
  in_edit = nil
  return answer
end

--- The pycapsule client once it is attached and initialized; its status notifications are recorded
--- while the documented handler keeps running.
function M.client()
  M.report.step = 'wait for the server'
  local client
  if not vim.wait(30000, function()
    client = vim.lsp.get_clients({ bufnr = 0, name = 'pycapsule' })[1]
    return client ~= nil and client.initialized
  end, 50) then
    M.fail('pycapsule did not attach to the buffer')
  end
  local notify_server = client.notify
  client.notify = function(self, method, params)
    if method == 'textDocument/didChange' and in_edit then
      in_edit.text_first = true
    end
    return notify_server(self, method, params)
  end
  local documented = client.handlers['pycapsule/status']
  client.handlers['pycapsule/status'] = function(err, status, ctx)
    table.insert(M.report.statuses, status)
    documented(err, status, ctx)
    table.insert(M.report.statusline, vim.g.pycapsule_status)
  end
  return client
end

--- `gra` at the cursor, choosing the action titled `title`; fails when it is not offered. The titles
--- offered are added to report.offered.
function M.code_action(title)
  local answered, chosen = false, false
  vim.ui.select = function(items, _, on_choice)
    answered = true
    for index, item in ipairs(items) do
      local offered = item.action and item.action.title or item.title
      table.insert(M.report.offered, offered)
      if offered == title then
        chosen = true
        return on_choice(item, index)
      end
    end
    on_choice(nil, nil)
  end
  vim.lsp.buf.code_action()
  -- With nothing to offer, Neovim says "No code actions available" (vim.notify) and never asks.
  vim.wait(10000, function() return answered or #M.report.notified > 0 end, 50)
  if not chosen then
    M.fail(('"%s" was not offered; offered: %s; said: %s'):format(
      title, vim.inspect(M.report.offered), vim.inspect(M.report.notified)))
  end
end

--- The last status of a run on `name` that carries its outcome, if it has ended.
function M.run_end(name)
  for index = #M.report.statuses, 1, -1 do
    local status = M.report.statuses[index]
    if status.name == name and status.outcome then
      return status
    end
  end
end

--- Waits until the buffer holds `text`; fails after `seconds`.
function M.wait_for_text(text, seconds)
  if not vim.wait(seconds * 1000, function() return M.buffer_text():find(text, 1, true) ~= nil end, 50) then
    M.fail(('%q never arrived; buffer:\n%s'):format(text, M.buffer_text()))
  end
end

return M
