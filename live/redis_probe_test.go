package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	simredis "github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/live/proc"
)

func TestProbeLagCut(t *testing.T) {
	dir := t.TempDir()
	bin, err := redisBinary()
	if err != nil {
		t.Skip(err)
	}
	sys, c, err := deploySentinel(Deployment{Ctx: context.Background(), Test: harness.Test{System: "redis", Clients: 1,
		SystemOptions: map[string]string{"replicas": "3"}}.WithDefaults(), Setup: 10 * time.Second, Dir: dir}, opts3(), bin)
	if _, ok := err.(*proc.MissingError); ok {
		t.Skip(err)
	}
	require.NoError(t, err)
	defer sys.close()
	for _, r := range []string{"replica2", "replica3"} {
		ok, err := sys.delay("redis", r, 5*time.Millisecond, time.Time{})
		require.True(t, ok)
		require.NoError(t, err)
	}
	ctx := context.Background()
	addr := c.proxies[[2]string{"c1", "redis"}].Addr()
	r3 := c.servers["replica3"].addr()
	p := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2})
	defer p.Close()
	q := goredis.NewClient(&goredis.Options{Addr: r3, Protocol: 2})
	defer q.Close()
	for i := range 5 {
		conn := p.Conn()
		s := time.Now()
		require.NoError(t, conn.Do(ctx, "SET", fmt.Sprint("x", i), "v").Err())
		n, err := conn.Do(ctx, "WAIT", 1, 1000).Int64()
		t.Logf("WAIT 1: %d in %v (%v)", n, time.Since(s), err)
		conn.Close()
		time.Sleep(50 * time.Millisecond)
	}
	conn := p.Conn()
	defer conn.Close()
	require.NoError(t, conn.Do(ctx, "SET", "k", "v", "NX", "PX", 10000).Err())
	n, _ := conn.Do(ctx, "WAIT", 1, 1000).Int64()
	t.Logf("WAIT %d", n)
	t0 := time.Now()
	_, err = sys.cut("replica3", "redis")
	require.NoError(t, err)
	t.Logf("cut after %v", time.Since(t0))
	time.Sleep(200 * time.Millisecond)
	v, err := q.Get(ctx, "k").Result()
	t.Logf("replica3 k=%q err=%v", v, err)
}

func opts3() simredis.Options {
	o := simredis.DefaultOptions()
	o.Replicas = 3
	return o
}
