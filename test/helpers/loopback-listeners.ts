import { createSocket } from 'node:dgram';
import { type AddressInfo, createServer } from 'node:net';

/** A TCP server and a UDP "name server" on loopback that count what reaches them. */
export async function loopbackListeners() {
  let connections = 0;
  let datagrams = 0;
  const tcp = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const udp = createSocket('udp4');
  udp.on('message', () => {
    datagrams++;
  });
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  return {
    tcpPort: (tcp.address() as AddressInfo).port,
    dnsPort: udp.address().port,
    seen: () => ({ connections, datagrams }),
    close: async () => {
      udp.close();
      await new Promise((resolve) => tcp.close(resolve));
    },
  };
}
