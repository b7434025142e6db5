package jobs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTelemetrySettings(t *testing.T) {
	cases := []struct {
		name string
		give string
		env  map[string]string
		want bool
	}{
		{name: "absent", give: "", want: false},
		{name: "true", give: "telemetry: {propagate_to_provider: true}", want: true},
		{name: "false", give: "telemetry: {propagate_to_provider: false}", want: false},
		{name: "from a variable", give: `telemetry: {propagate_to_provider: "${PROPAGATE}"}`, env: map[string]string{"PROPAGATE": "true"}, want: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("spec.yaml", []byte(doc("version: 1", c.give, "jobs:", "  - {id: a, prompt: hi}")), mapEnv(c.env))
			require.NoError(t, err)
			assert.Equal(t, c.want, s.Telemetry.PropagateToProvider)
		})
	}
}
