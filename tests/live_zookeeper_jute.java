// Prints ZooKeeper packets as ZooKeeper's own jute classes (3.8.0, Debian's
// /usr/share/java/zookeeper.jar) serialize them, one per line: a name, then
// the packet in hex, framed with its length as ClientCnxn.Packet.createBB and
// ZooKeeperServer.finishSessionInit frame theirs. tests/live_zookeeper_test.cpp
// holds what it printed and compares locksim's codec with it. To print it again
// (java's single-file launch: no javac, a few seconds):
//   java -cp /usr/share/java/zookeeper.jar tests/live_zookeeper_jute.java
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.*;

public class JuteReference {
  static void print(String name, Record header, Record body, Boolean trailingBool) throws Exception {
    ByteArrayOutputStream baos = new ByteArrayOutputStream();
    BinaryOutputArchive boa = BinaryOutputArchive.getArchive(baos);
    boa.writeInt(-1, "len");
    if (header != null) header.serialize(boa, "header");
    if (body != null) body.serialize(boa, "body");
    if (trailingBool != null) boa.writeBool(trailingBool, "readOnly");
    byte[] b = baos.toByteArray();
    int n = b.length - 4;
    b[0] = (byte) (n >>> 24); b[1] = (byte) (n >>> 16); b[2] = (byte) (n >>> 8); b[3] = (byte) n;
    StringBuilder sb = new StringBuilder();
    for (byte x : b) sb.append(String.format("%02x", x));
    System.out.println(name + " " + sb);
  }

  public static void main(String[] args) throws Exception {
    byte[] passwd = new byte[16];
    print("connect-new", null, new ConnectRequest(0, 0, 10000, 0, new byte[16]), false);
    for (int i = 0; i < 16; i++) passwd[i] = (byte) (i * 17);
    print("connect-again", null, new ConnectRequest(0, 0x1234567890L, 4000, 0x0100001384e60000L, passwd), false);
    print("create2", new RequestHeader(1, ZooDefs.OpCode.create2),
          new CreateRequest("/lock/_c_ab12-lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 3), null);
    print("create", new RequestHeader(2, ZooDefs.OpCode.create),
          new CreateRequest("/lock", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0), null);
    print("getChildren", new RequestHeader(3, ZooDefs.OpCode.getChildren), new GetChildrenRequest("/lock", true), null);
    print("getChildren2", new RequestHeader(4, ZooDefs.OpCode.getChildren2), new GetChildren2Request("/lock", false), null);
    print("getData", new RequestHeader(5, ZooDefs.OpCode.getData), new GetDataRequest("/lock/n-0000000001", true), null);
    print("exists", new RequestHeader(6, ZooDefs.OpCode.exists), new ExistsRequest("/lock/n-0000000002", false), null);
    print("delete", new RequestHeader(7, ZooDefs.OpCode.delete), new DeleteRequest("/lock/n-0000000001", -1), null);
    print("addWatch", new RequestHeader(8, ZooDefs.OpCode.addWatch), new AddWatchRequest("/lock", 1), null);
    print("ping", new RequestHeader(-2, ZooDefs.OpCode.ping), null, null);
    print("closeSession", new RequestHeader(9, ZooDefs.OpCode.closeSession), null, null);
    // What a server sends.
    print("connect-response", null, new ConnectResponse(0, 6000, 0x0100001384e60001L, passwd), false);
    Stat stat = new Stat(0x105L, 0x106L, 1700000000123L, 1700000000456L, 1, 2, 3, 0x0100001384e60001L, 4, 5, 0x107L);
    print("create2-response", new ReplyHeader(1, 0x105L, 0), new Create2Response("/lock/_c_ab12-lock-0000000007", stat), null);
    print("getChildren-response", new ReplyHeader(3, 0x10aL, 0),
          new GetChildrenResponse(Arrays.asList("n-0000000002", "n-0000000001")), null);
    print("getData-response", new ReplyHeader(5, 0x10bL, 0), new GetDataResponse(new byte[] {1, 2, 3}, stat), null);
    print("error-response", new ReplyHeader(7, 0x10cL, -101), null, null);
    print("notification", new ReplyHeader(-1, -1L, 0), new WatcherEvent(2, 3, "/lock/n-0000000001"), null);
  }
}
