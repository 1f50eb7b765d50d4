package stack

import (
	"regexp"
	"strings"
)

// stableMessage is an error message without the parts that change from
// one attempt to the next although the fault is the same, so that a
// failure is recognised when it repeats (the key of a Failed
// notification). It is conservative: only names a program generates at
// random are replaced by "*", never what tells two faults apart.
//
// Replaced:
//   - temporary names in paths, as os.MkdirTemp and os.CreateTemp make
//     them (a prefix ending in "-", "." or "_", then 6 to 10 random
//     digits, then maybe an extension): …/stacks/.pull-3315430801 is
//     …/stacks/.pull-*, …/x-123456789.yaml is …/x-*.yaml. Go's random
//     part is a uint32 in decimal: shorter than 6 digits once in about
//     40,000 names, which then count as another message;
//   - mktemp's default names in paths (tmp.XXXXXXXXXX): …/tmp.Ab3dE9fGh2
//     is …/tmp.*;
//   - the local, ephemeral port of a connection in Go's network errors
//     (read tcp 10.0.0.5:43122->10.0.0.1:443): the port before "->";
//   - the current time in x509's expiry errors ("current time … is
//     after …").
//
// Kept: the remote address and port (another server is another fault),
// digests and revisions (content and history), object names and UIDs
// (another object is another fault), and numbers outside paths.
func stableMessage(msg string) string {
	msg = replacePathComponents(msg)
	msg = ephemeralPort.ReplaceAllString(msg, ":*->")
	msg = x509Now.ReplaceAllString(msg, "current time * is $1")
	return msg
}

var (
	// goTempName is a whole path component made by os.MkdirTemp or
	// os.CreateTemp with a pattern that has a separator before its "*".
	goTempName = regexp.MustCompile(`^(.*?[-._])[0-9]{6,10}((?:\.[A-Za-z][A-Za-z0-9]{0,7})?)$`)
	// mktempName is mktemp's default template, tmp.XXXXXXXXXX.
	mktempName    = regexp.MustCompile(`^tmp\.[A-Za-z0-9]{10}$`)
	ephemeralPort = regexp.MustCompile(`:[0-9]{1,5}->`)
	x509Now       = regexp.MustCompile(`current time [0-9T:.+Z-]+ is (after|before)`)
)

// pathEnd are the characters that end a path component in a message.
const pathEnd = "/ \t\n:\"'(),;"

// replacePathComponents rewrites each component that follows a "/" and
// is a temporary name.
func replacePathComponents(msg string) string {
	if !strings.Contains(msg, "/") {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '/')
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+1])
		msg = msg[i+1:]
		end := strings.IndexAny(msg, pathEnd)
		if end < 0 {
			end = len(msg)
		}
		b.WriteString(stableComponent(msg[:end]))
		msg = msg[end:]
	}
}

func stableComponent(c string) string {
	if m := goTempName.FindStringSubmatch(c); m != nil {
		return m[1] + "*" + m[2]
	}
	if mktempName.MatchString(c) {
		return "tmp.*"
	}
	return c
}
