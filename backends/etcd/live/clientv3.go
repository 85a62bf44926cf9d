package live

import (
	"context"
	"fmt"
	"net"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/netgate"
)

// NewClientV3 returns a plain *clientv3.Client of the cluster for client
// node name, dialling its members through d (so the node's pauses and cuts
// gate it): the client a user's own lock is given live (userlock/live).
func (c *Cluster) NewClientV3(name string, d *netgate.Dialer) (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		})}})
	if err != nil {
		return nil, fmt.Errorf("etcd client %s: %w", name, err)
	}
	return cli, nil
}
