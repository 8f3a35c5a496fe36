package incluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDockerfile(t *testing.T) {
	t.Run("finds the build stage's image and splits the go build line, quotes included", func(t *testing.T) {
		b, err := ParseDockerfile([]byte(`# comment with go build in it
FROM golang:1.26 AS build
RUN go mod download
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
    -ldflags="-s -w" -o /out/app ./cmd/app
FROM gcr.io/distroless/static-debian12:nonroot
`))
		require.NoError(t, err)
		assert.Equal(t, BuildLine{
			Env: []string{"CGO_ENABLED=0", "GOOS=linux"}, Flags: []string{"-trimpath", "-ldflags=-s -w"},
			Output: "/out/app", Package: "./cmd/app", GoImage: "golang:1.26",
		}, b)
	})
	for name, dockerfile := range map[string]string{
		"no go build":           "FROM golang:1.26\nRUN make\n",
		"no golang stage":       "FROM debian\nRUN go build -o /x ./y\n",
		"two go builds":         "FROM golang:1.26\nRUN go build -o /a ./a\nRUN go build -o /b ./b\n",
		"no -o":                 "FROM golang:1.26\nRUN go build ./a\n",
		"a shell pipeline":      "FROM golang:1.26\nRUN go build -o /a ./a && strip /a\n",
		"an unterminated quote": "FROM golang:1.26\nRUN go build -ldflags=\"-s -o /a ./a\n",
	} {
		t.Run("an error for "+name, func(t *testing.T) {
			_, err := ParseDockerfile([]byte(dockerfile))
			require.Error(t, err)
		})
	}
}

func TestParse(t *testing.T) {
	objs, err := Parse([]byte("# only a comment\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n"))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "/api/v1/namespaces", collectionPath(objs[0]))
	assert.Equal(t, "/apis/rbac.authorization.k8s.io/v1/clusterroles", collectionPath(Find(objs, "ClusterRole", "r")))
	assert.Nil(t, Find(objs, "ClusterRole", "other"))

	_, err = Parse([]byte("kind: Namespace\nmetadata:\n  name: a\n"))
	require.ErrorContains(t, err, "apiVersion, kind and metadata.name are required")
	_, err = Parse([]byte("apiVersion: v1\nkind: [\n"))
	require.Error(t, err)
}

func TestCheckStaticRefusesADynamicExecutable(t *testing.T) {
	// /bin/sh on Debian (dash) is linked against libc.
	require.Error(t, checkStatic("/bin/sh"))
	require.Error(t, checkStatic("build_test.go"), "not an ELF file")
}
