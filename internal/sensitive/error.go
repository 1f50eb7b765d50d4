package sensitive

// Err masks the sensitive strings in err's message; errors.Is and
// errors.As still see the original.
func (r *Redactor) Err(err error) error {
	if err == nil || r == nil || len(r.needles) == 0 {
		return err
	}
	msg := r.Text(err.Error())
	if msg == err.Error() {
		return err
	}
	return &Error{msg: msg, err: err}
}

// Error is an error whose message has its sensitive values masked.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }
