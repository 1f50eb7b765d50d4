package config

// valueMark is the type of the cty marks this package puts on values.
type valueMark string

// Sensitive marks values from sensitive variables and set_sensitive. Check
// with v.HasMark(config.Sensitive) or cty's marks helpers; never print such a
// value.
const Sensitive = valueMark("sensitive")

func (m valueMark) GoString() string { return "config." + string(m) }
