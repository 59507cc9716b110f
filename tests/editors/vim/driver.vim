" driver.vim: drive Vim 9 + ALE 3.3 headless like a user: generate, hover, quick-fix, cancel.
" Sourced after the vimrc block of docs/editors.md, with the stub file open. Reads $PYCAPSULE_VIM_*
" and writes what it saw as JSON to $PYCAPSULE_VIM_REPORT. ALE asks for a choice with input() and
" shows messages with echo: both are replaced here by a user who picks by title and reads everything.

let s:report = {}
let g:pycapsule_choose = ''
let g:pycapsule_menus = []
let g:pycapsule_messages = []

runtime autoload/ale/util.vim
function! ale#util#Input(message, value, ...) abort
    call add(g:pycapsule_menus, a:message)
    for l:line in split(a:message, "\n")
        if l:line =~# '^\d\+) ' && stridx(l:line, g:pycapsule_choose) >= 0
            return matchstr(l:line, '^\d\+')
        endif
    endfor
    return ''
endfunction
function! ale#util#ShowMessage(string, ...) abort
    call add(g:pycapsule_messages, a:string)
endfunction

function! s:Write() abort
    let s:report.menus = g:pycapsule_menus
    let s:report.messages = g:pycapsule_messages
    let s:report.errmsg = v:errmsg
    let s:report.vim_messages = execute('messages')
    call writefile([json_encode(s:report)], $PYCAPSULE_VIM_REPORT)
endfunction

function! s:Fail(what) abort
    let s:report.error = a:what
    call s:Write()
    cquit!
endfunction

function! s:Wait(what, condition, seconds) abort
    let l:deadline = reltimefloat(reltime()) + a:seconds
    while !eval(a:condition)
        if reltimefloat(reltime()) > l:deadline
            call s:Fail('timed out waiting for ' . a:what)
        endif
        sleep 50m
    endwhile
endfunction

function! s:Goto(needle) abort
    call cursor(1, 1)
    if search('\V' . escape(a:needle, '\'), 'cW') == 0
        call s:Fail('no "' . a:needle . '" in the buffer')
    endif
endfunction

function! s:Has(text) abort
    return search('\V' . escape(a:text, '\'), 'nw') > 0
endfunction

function! s:Said(text) abort
    return !empty(filter(copy(g:pycapsule_messages), 'stridx(v:val, a:text) >= 0'))
endfunction

function! s:Drive() abort
    " 1. generate: the code action on the stub's docstring
    call s:Goto('The sum of the decimal digits')
    let g:pycapsule_choose = 'Generate & self-debug'
    ALECodeAction
    call s:Wait('the generated body', 's:Has($PYCAPSULE_VIM_EXPECT)', 90)
    write

    " 2. hover on the name: the attempt history
    call s:Goto('def digit_sum')
    normal! 5l
    ALEHover
    call s:Wait('the hover', 's:Said("attempts at digit_sum")', 30)

    " 3. quick-fix: break a function, save, take the fix on its failing doctest
    call s:Goto('return 2 * n')
    substitute/2 \* n/3 * n/
    write
    call s:Goto('>>> already_written(2)')
    call s:Wait('the doctest diagnostic', '!empty(ale#engine#GetLoclist(bufnr("")))', 60)
    let g:pycapsule_choose = 'Self-debug `already_written`'
    ALECodeAction
    call s:Wait('the fixed body', 's:Has("return 2 * n")', 90)
    write

    " 4. cancel: start the stub the model never finishes, then its Cancel action
    call s:Goto('The model never finishes')
    let g:pycapsule_choose = 'Generate & self-debug'
    ALECodeAction
    call s:Wait('the start message', 's:Said("Generating `slow_stub`")', 30)
    let g:pycapsule_choose = 'Cancel generating `slow_stub`'
    ALECodeAction
    call s:Wait('the end message', 's:Said("`slow_stub`: cancelled")', 30)
    write
    call s:Write()
    qall!
endfunction

try
    call s:Drive()
catch
    call s:Fail(v:exception . ' at ' . v:throwpoint)
endtry
