;;; edit_above.el --- issue 47's scenarios in Emacs 28 + eglot 1.9, on a stub above a failing function.
;; Loaded after the set-up block of docs/editors.md.  Generates the stub with M-x eglot-code-actions (which
;; moves the failing function down), then
;; - with PYCAPSULE_EMACS_TYPE=through: types in a line outside both functions, a keystroke every 0.2 s, from
;;   the run's start through its result's arrival and PYCAPSULE_EMACS_BEYOND seconds more, then pauses;
;; - else: right after the edit, M-x eglot-code-actions on the failing function's name and in its body
;;   (where eglot sends no diagnostic), then at the end of its failing example's line, where it takes the
;;   "Self-debug" fix.
;; Writes what it saw as JSON to PYCAPSULE_EMACS_REPORT (what was shown too).  Exits 0 when it got to the end.

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(defvar pycapsule-test-typed 0)

(defun pycapsule-test-keystroke (buffer line)
  "The user types one character at the end of LINE (its text as the file has it) in BUFFER."
  (with-current-buffer buffer
    (save-excursion
      (goto-char (point-min))
      (search-forward line)
      (end-of-line)
      (insert "x")
      (cl-incf pycapsule-test-typed))))

(condition-case err
    (let ((typing (getenv "PYCAPSULE_EMACS_TYPE"))
          (typing-line (getenv "PYCAPSULE_EMACS_TYPING_LINE")))
      (pycapsule-test-start)
      (pycapsule-test-wait "the doctest diagnostic on the failing function" (lambda () (flymake-diagnostics)) 60)

      (pycapsule-test-goto "The sum of the decimal digits")
      (pycapsule-test-note :offered (pycapsule-test-m-x-code-actions "Generate & self-debug"))
      (when (equal typing "through")
        (let ((keys (run-with-timer 0.2 0.2 #'pycapsule-test-keystroke (current-buffer) typing-line)))
          (pycapsule-test-wait "the result's first offer" (lambda () pycapsule-test-edits) 60)
          (let ((until (+ (float-time) (string-to-number (getenv "PYCAPSULE_EMACS_BEYOND")))))
            (pycapsule-test-wait "the end of the typing" (lambda () (> (float-time) until)) 60))
          (cancel-timer keys)
          (pycapsule-test-note :edits-while-typing (reverse pycapsule-test-edits))
          (pycapsule-test-pause)))
      (pycapsule-test-wait "the generated body" (lambda () (pycapsule-test-has (getenv "PYCAPSULE_EMACS_EXPECT"))) 90)

      (unless typing
        ;; right after the edit: M-x eglot-code-actions on the failing function's name and in its body (eglot
        ;; sends no diagnostic there: only the server knows), then at the end of its failing example's line
        (pycapsule-test-goto "def twice")
        (search-forward "twice")
        (pycapsule-test-note :sent-on-def (length (apply #'flymake-diagnostics (eglot--region-bounds))))
        (pycapsule-test-note :offered-on-def (pycapsule-test-m-x-code-actions))
        (pycapsule-test-goto "    return 3 * n")
        (search-forward "retu")
        (pycapsule-test-note :sent-on-body (length (apply #'flymake-diagnostics (eglot--region-bounds))))
        (pycapsule-test-note :offered-on-body (pycapsule-test-m-x-code-actions))
        (pycapsule-test-goto (getenv "PYCAPSULE_EMACS_FAILING"))
        (end-of-line)
        (pycapsule-test-note :failing-line (line-number-at-pos))
        (pycapsule-test-note :fix-offered (pycapsule-test-m-x-code-actions "Self-debug `twice` (doctests failing)"))
        (pycapsule-test-wait "the fixed body" (lambda () (pycapsule-test-has (getenv "PYCAPSULE_EMACS_FIXED"))) 90)
        (pycapsule-test-wait "the end of the self-debug run" (lambda () (pycapsule-test-run-ended "twice")) 30)
        (pycapsule-test-note :fixed (plist-get (pycapsule-test-run-ended "twice") :outcome)))

      (pycapsule-test-wait "the end of the run on digit_sum" (lambda () (pycapsule-test-run-ended "digit_sum")) 30)
      (pycapsule-test-note :generated (plist-get (pycapsule-test-run-ended "digit_sum") :outcome))
      (pycapsule-test-note :edits (reverse pycapsule-test-edits))
      (pycapsule-test-note :typed pycapsule-test-typed)
      (pycapsule-test-goto typing-line)
      (pycapsule-test-note :typing-line (buffer-substring-no-properties (point) (line-end-position)))
      (accept-process-output nil 0.5)  ; a late answer or message after the run's end arrives by now
      (save-buffer)
      (pycapsule-test-finish))
  (error (pycapsule-test-fail (format "%S" err))))
