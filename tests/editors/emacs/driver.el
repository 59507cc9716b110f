;;; driver.el --- drive Emacs 28 + eglot 1.9 headless like a user: generate, quick-fix, hover, cancel.
;; Loaded after the set-up block of docs/editors.md.  Reads PYCAPSULE_EMACS_* from the environment and
;; writes what it saw as JSON to PYCAPSULE_EMACS_REPORT.  Exits 0 when it got to the end.

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(condition-case err
    (progn
      (pycapsule-test-start)

      ;; 1. generate: the refactor.rewrite action on the stub (the only one: eglot runs it at once)
      (pycapsule-test-goto "The sum of the decimal digits")
      (pycapsule-test-note :offered (mapcar (lambda (a) (plist-get a :title))
                                            (eglot-code-actions (point) nil "refactor.rewrite")))
      (eglot-code-actions (point) nil "refactor.rewrite" t)
      (pycapsule-test-wait "the generated body"
                           (lambda () (save-excursion (goto-char (point-min))
                                                      (search-forward (getenv "PYCAPSULE_EMACS_EXPECT") nil t)))
                           90)
      ;; the edit is applied before the run's last status notification: wait for that too
      (pycapsule-test-wait "the end of the run on digit_sum" (lambda () (pycapsule-test-run-ended "digit_sum")) 30)
      (pycapsule-test-note :generated (plist-get (pycapsule-test-run-ended "digit_sum") :outcome))
      (save-buffer)
      (pycapsule-test-note-what-was-shown)
      (pycapsule-test-note :shown-after-generate (plist-get pycapsule-test-report :messages))

      ;; 2. hover on the name: the attempt history
      (pycapsule-test-goto "def digit_sum")
      (forward-char 5)
      (let ((hover (jsonrpc-request (eglot--current-server-or-lose) :textDocument/hover
                                    (eglot--TextDocumentPositionParams))))
        (pycapsule-test-note :hover (plist-get (plist-get hover :contents) :value)))

      ;; 3. quick-fix: break a function, save, take the quickfix on its failing doctest
      (pycapsule-test-goto "    return 2 * n")
      (search-forward "2 * n")
      (replace-match "3 * n")
      (save-buffer)
      (pycapsule-test-goto "    >>> already_written(2)")
      (pycapsule-test-wait "the doctest diagnostic" (lambda () (flymake-diagnostics (point) (line-end-position))) 60)
      (eglot-code-actions (point) (line-end-position) "quickfix" t)
      (pycapsule-test-wait "the fixed body"
                           (lambda () (save-excursion (goto-char (point-min)) (search-forward "return 2 * n" nil t)))
                           90)
      (pycapsule-test-wait "the end of the run on already_written"
                           (lambda () (pycapsule-test-run-ended "already_written")) 30)
      (pycapsule-test-note :fixed (plist-get (pycapsule-test-run-ended "already_written") :outcome))
      (save-buffer)

      ;; 4. cancel: start the stub the model never finishes, then its "Cancel ..." action
      (pycapsule-test-goto "The model never finishes")
      (eglot-code-actions (point) nil "refactor.rewrite" t)
      (pycapsule-test-wait "the run on slow_stub"
                           (lambda () (cl-find-if (lambda (s) (equal (plist-get s :name) "slow_stub"))
                                                  pycapsule-test-statuses)))
      (pycapsule-test-note :cancel-offered (mapcar (lambda (a) (plist-get a :title))
                                                   (eglot-code-actions (point) nil "refactor.rewrite")))
      (eglot-code-actions (point) nil "refactor.rewrite" t)
      (pycapsule-test-wait "the cancelled run" (lambda () (pycapsule-test-run-ended "slow_stub")) 30)
      (pycapsule-test-note :cancelled (plist-get (pycapsule-test-run-ended "slow_stub") :outcome))
      (save-buffer)
      (pycapsule-test-finish))
  (error (pycapsule-test-fail (format "%S" err))))
