package redisstore_test

import (
	"os"
	"testing"

	"github.com/fanyi-go/translate/redisstore"
	"github.com/fanyi-go/translate/redisstore/internal/scenario"
)

func TestMain(m *testing.M) {
	if os.Getenv(scenario.EnvReplica) != "" { // a replica process of TestReplicas
		os.Exit(scenario.ReplicaMain())
	}
	os.Exit(redisstore.RunTestMain(m))
}
