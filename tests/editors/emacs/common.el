;;; common.el --- what the Emacs drivers share: the JSON report, waiting, the run's statuses, M-x
;;; eglot-code-actions as a user runs it, the user pausing (eglot reports typing only then), and what the
;;; user was shown (*Messages*, eglot's events and stderr buffers).

(require 'eglot)
(require 'json)
(require 'cl-lib)

(defvar pycapsule-test-statuses nil "Every pycapsule/status notification, newest first.")
(defvar pycapsule-test-report (list))
(defvar pycapsule-test-edits nil "What became of each workspace/applyEdit: \"applied\" or eglot's error, newest first.")

(cl-defmethod eglot-handle-notification (_server (_method (eql pycapsule/status)) &rest params)
  (push params pycapsule-test-statuses))

(advice-add 'eglot--apply-workspace-edit :around
            (lambda (apply &rest args)
              (condition-case err
                  (prog1 (apply apply args) (push "applied" pycapsule-test-edits))
                (error (push (error-message-string err) pycapsule-test-edits)
                       (signal (car err) (cdr err))))))

(defun pycapsule-test-note (key value)
  (setq pycapsule-test-report (plist-put pycapsule-test-report key value)))

(defun pycapsule-test-write ()
  (with-temp-file (getenv "PYCAPSULE_EMACS_REPORT")
    (insert (json-encode pycapsule-test-report))))

(defun pycapsule-test-fail (what)
  (pycapsule-test-note :error what)
  (pycapsule-test-write)
  (kill-emacs 1))

(defun pycapsule-test-wait (what predicate &optional seconds)
  "Let Emacs run (process output, timers) until PREDICATE holds; fail after SECONDS."
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (pycapsule-test-fail (format "timed out waiting for %s" what)))
      (accept-process-output nil 0.05)
      (sit-for 0.05))))

(defun pycapsule-test-goto (needle)
  (goto-char (point-min))
  (unless (search-forward needle nil t) (pycapsule-test-fail (format "no %S in the buffer" needle)))
  (beginning-of-line))

(defun pycapsule-test-has (text)
  (save-excursion (goto-char (point-min)) (search-forward text nil t)))

(defun pycapsule-test-run-ended (name)
  (cl-find-if (lambda (s) (and (equal (plist-get s :name) name) (plist-get s :outcome)))
              pycapsule-test-statuses))

(defun pycapsule-test-start ()
  "Open the file of $PYCAPSULE_EMACS_FILE with eglot as the set-up block starts it, and wait for the server."
  (find-file (getenv "PYCAPSULE_EMACS_FILE"))
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (pycapsule-test-wait "the server" (lambda () (eglot-current-server))))

(defun pycapsule-test-m-x-code-actions (&optional title)
  "What `M-x eglot-code-actions' RET does at point (no region), the user choosing TITLE from the menu, or
leaving it with C-g when TITLE is nil.  Returns the titles offered; fails when TITLE is not among them."
  (let ((offered nil)
        (last-nonmenu-event ?\r))  ; a keyboard command: eglot asks with completing-read, not a popup menu
    (catch 'pycapsule-test-menu
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt collection &rest _)
                   (setq offered (mapcar #'car collection))
                   (cond ((null title) (throw 'pycapsule-test-menu nil))
                         ((member title offered) title)
                         (t (pycapsule-test-fail (format "%S was not offered; offered: %S" title offered)))))))
        (call-interactively #'eglot-code-actions)))
    offered))

(defun pycapsule-test-pause ()
  "The user stops typing: Emacs runs its idle timers once they are due, eglot's didChange among them.
Batch Emacs never runs idle timers by itself, so this does what the command loop would after the pause."
  (accept-process-output nil eglot-send-changes-idle-time)
  (when eglot--change-idle-timer
    (timer-event-handler eglot--change-idle-timer)))

(defun pycapsule-test-note-what-was-shown ()
  "*Messages*, and the lines of eglot's events and stderr buffers that hold a traceback or CANCELLED."
  (let ((server (eglot-current-server)))
    (pycapsule-test-note :messages (with-current-buffer "*Messages*" (buffer-string)))
    (pycapsule-test-note :stderr (with-current-buffer (jsonrpc-stderr-buffer server) (buffer-string)))
    (pycapsule-test-note
     :events-flagged
     (with-current-buffer (jsonrpc-events-buffer server)
       (let ((case-fold-search nil))
         (cl-remove-if-not (lambda (line) (string-match-p "Traceback\\|CANCELLED" line))
                           (split-string (buffer-string) "\n")))))))

(defun pycapsule-test-finish ()
  "Write the report, shut the server down and leave with 0."
  (pycapsule-test-note-what-was-shown)
  (pycapsule-test-write)
  (let ((eglot-autoshutdown nil)) (eglot-shutdown (eglot-current-server)))
  (kill-emacs 0))
