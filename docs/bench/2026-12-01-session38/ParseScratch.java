import io.millrace.bench.v1.BenchMessage;
import io.millrace.rpc.ProtobufMarshaller;
import io.millrace.streams.internal.Payloads;
import io.netty.buffer.*;
import io.netty.util.concurrent.FastThreadLocalThread;
import com.google.protobuf.*;

/**
 * Parse cost of an 8-byte BenchMessage from a direct buffer, one variant per JVM (a shared JIT
 * profile between variants skews them): "cur" is ProtobufMarshaller's decoder before 6c1b62a (one
 * builder and one decoder reused for good, reference fields stored per message; two here, where
 * that code stored four or five), "nostore" the decoder
 * of 6c1b62a (reused decoder, a builder per message, no reference stored into the long-lived
 * scratch per message), "young" the decoder of 2851ca5 (a builder reused until the
 * decoder's array is used up and replaced with it, so that it does not grow old; no reference
 * stored per message), "marshaller" the class on the class path, "parseFrom" protobuf's own
 * BenchMessage.parseFrom(byte[]).
 *
 * <pre>
 * CP=millrace-bench/target/millrace-bench.jar
 * javac -cp $CP -d /tmp/pb docs/bench/2026-12-01-session38/ParseScratch.java
 * for v in cur nostore young marshaller parseFrom; do for gc in G1 Parallel; do
 *   taskset -c 1 java -XX:+Use${gc}GC -Dv=$v -cp $CP:/tmp/pb ParseScratch; done; done
 * </pre>
 * Prints ns per parse for rounds 5 to 8 of 8 (10 million parses each).
 */
public class ParseScratch {
  static volatile Object sink;
  public static void main(String[] a) throws Exception {
    Thread t = new FastThreadLocalThread(() -> { try { run(); } catch (Exception e) { e.printStackTrace(); } });
    t.start(); t.join();
  }
  static final byte[] decoded = new byte[65536];
  static CodedInputStream decoder;
  static MessageLite.Builder builder;
  static Parser<BenchMessage> parser = BenchMessage.parser();

  // before 6c1b62a: reused decoder and reused builder
  static BenchMessage cur(ByteBuf data) throws Exception {
    int length = data.readableBytes();
    CodedInputStream in = decoder;
    if (in == null || in.getTotalBytesRead() + length > 65536) in = CodedInputStream.newInstance(decoded);
    int at = in.getTotalBytesRead();
    Payloads.copyReadable(data, decoded, at);
    MessageLite.Builder b = builder; if (b == null) b = BenchMessage.newBuilder();
    int limit = in.pushLimit(length);
    b.mergeFrom(in, ExtensionRegistryLite.getEmptyRegistry());
    BenchMessage v = (BenchMessage) b.buildPartial();
    in.checkLastTagWas(0); in.popLimit(limit);
    builder = b.clear(); decoder = in; return v;
  }
  // 6c1b62a: reused decoder, stored only when replaced; a builder per message
  static BenchMessage noStore(ByteBuf data) throws Exception {
    int length = data.readableBytes();
    CodedInputStream in = decoder;
    if (in == null || in.getTotalBytesRead() + length > 65536) { in = CodedInputStream.newInstance(decoded); decoder = in; }
    int at = in.getTotalBytesRead();
    Payloads.copyReadable(data, decoded, at);
    int limit = in.pushLimit(length);
    BenchMessage v;
    try {
      v = parser.parsePartialFrom(in, ExtensionRegistryLite.getEmptyRegistry());
      in.checkLastTagWas(0);
    } catch (Exception e) { decoder = null; throw e; }
    in.popLimit(limit);
    return v;
  }
  // a builder reused until the decoder's array is used up, then replaced with the decoder: it stays
  // young, and no reference is stored per message
  static BenchMessage.Builder youngBuilder;
  static BenchMessage young(ByteBuf data) throws Exception {
    int length = data.readableBytes();
    CodedInputStream in = decoder;
    BenchMessage.Builder b = youngBuilder;
    if (in == null || in.getTotalBytesRead() + length > 65536) {
      in = CodedInputStream.newInstance(decoded); decoder = in;
      b = BenchMessage.newBuilder(); youngBuilder = b;
    }
    int at = in.getTotalBytesRead();
    Payloads.copyReadable(data, decoded, at);
    int limit = in.pushLimit(length);
    BenchMessage v;
    try {
      b.mergeFrom(in, ExtensionRegistryLite.getEmptyRegistry());
      v = b.buildPartial();
      in.checkLastTagWas(0);
      b.clear();
    } catch (Exception e) { decoder = null; youngBuilder = null; throw e; }
    in.popLimit(limit);
    return v;
  }
  static final ProtobufMarshaller<BenchMessage> PM = ProtobufMarshaller.of(BenchMessage.getDefaultInstance());
  static void run() throws Exception {
    BenchMessage m = BenchMessage.newBuilder().setPayload(ByteString.copyFrom(new byte[8])).build();
    byte[] bytes = m.toByteArray();
    ByteBuf buf = ByteBufAllocator.DEFAULT.directBuffer(1024);
    buf.writeBytes(bytes);
    int N = 10_000_000;
    String v = System.getProperty("v");
    for (int round = 0; round < 8; round++) {
      Object o = null;
      long t0 = System.nanoTime();
      switch (v) {
        case "cur": for (int i = 0; i < N; i++) { o = cur(buf); } break;
        case "young": for (int i = 0; i < N; i++) { o = young(buf); } break;
        case "nostore": for (int i = 0; i < N; i++) { o = noStore(buf); } break;
        case "marshaller": for (int i = 0; i < N; i++) { o = PM.parse(buf); } break;
        case "parseFrom": for (int i = 0; i < N; i++) { o = BenchMessage.parseFrom(bytes); } break;
      }
      long t1 = System.nanoTime(); sink = o;
      if (round >= 4) System.out.printf("%.1f ", (t1-t0)/(double)N);
    }
    System.out.println();
  }
}
