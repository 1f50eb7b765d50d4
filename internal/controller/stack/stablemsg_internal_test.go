package stack

import "testing"

func TestStableMessage(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"pull temp dir",
			"spec.source: mkdir /var/cache/convoy/stacks/.pull-3315430801: read-only file system",
			"spec.source: mkdir /var/cache/convoy/stacks/.pull-*: read-only file system"},
		{"a shorter random part",
			"mkdir /c/stacks/.pull-102030: read-only file system",
			"mkdir /c/stacks/.pull-*: read-only file system"},
		{"temp file with an extension, and a rename",
			"rename /c/tmp/kubeconfig-998877665/config.yaml /c/x-123456789.yaml: no space left on device",
			"rename /c/tmp/kubeconfig-*/config.yaml /c/x-*.yaml: no space left on device"},
		{"two temp names in one path",
			"open /tmp/convoy-plan-stack-4294967295/charts/.download-17: permission denied",
			"open /tmp/convoy-plan-stack-*/charts/.download-17: permission denied"},
		{"mktemp",
			`lstat "/tmp/tmp.Ab3dE9fGh2/chart": no such file or directory`,
			`lstat "/tmp/tmp.*/chart": no such file or directory`},
		{"ephemeral port",
			"Get \"https://10.0.0.1:6443/api\": read tcp 10.0.0.5:43122->10.0.0.1:6443: read: connection reset by peer",
			"Get \"https://10.0.0.1:6443/api\": read tcp 10.0.0.5:*->10.0.0.1:6443: read: connection reset by peer"},
		{"ephemeral port, IPv6",
			"write tcp [::1]:51234->[::1]:5000: broken pipe",
			"write tcp [::1]:*->[::1]:5000: broken pipe"},
		{"x509 now",
			"tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-27T01:02:03Z is after 2026-11-01T00:00:00Z",
			"tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time * is after 2026-11-01T00:00:00Z"},

		// Kept: what tells two faults apart.
		{"remote port", "dial tcp 127.0.0.1:34567: connect: connection refused", "dial tcp 127.0.0.1:34567: connect: connection refused"},
		{"digest", "mkdir /c/stacks/sha256-0123456789abcdef: file exists", "mkdir /c/stacks/sha256-0123456789abcdef: file exists"},
		{"chart versions", "open /c/charts/nginx-1.27.3.tgz: no such file", "open /c/charts/nginx-1.27.3.tgz: no such file"},
		{"numbers outside paths", "release web-00: revision 1234567 failed", "release web-00: revision 1234567 failed"},
		{"a number with no separator", "open /c/build1234567: denied", "open /c/build1234567: denied"},
		{"too long to be random", "open /c/x-12345678901: denied", "open /c/x-12345678901: denied"},
		{"an object name", "apps/v1 Deployment shop/web-5d9c7f6b8: not ready", "apps/v1 Deployment shop/web-5d9c7f6b8: not ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stableMessage(tc.in); got != tc.want {
				t.Errorf("stableMessage(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}
