package memorytest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/fanyi-go/translate/fidelity/memory"
	"github.com/fanyi-go/translate/fidelity/memory/memorytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store {
		m, err := memory.New(memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}
