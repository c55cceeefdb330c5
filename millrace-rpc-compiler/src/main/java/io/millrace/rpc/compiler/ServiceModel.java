package io.millrace.rpc.compiler;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileOptions;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodOptions;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.UnknownFieldSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One service as the generators see it: Java names resolved, method options read. {@code
 * outerClass} is the Java class holding the file's descriptor, null for the lite runtime (which has
 * no descriptors).
 */
record ServiceModel(
    String protoFile,
    String javaPackage,
    String name,
    String fullName,
    String outerClass,
    List<Method> methods) {

  /**
   * The field number of {@code millrace.rpc.fire_and_forget} in {@code millrace/rpc/options.proto}.
   */
  static final int FIRE_AND_FORGET_FIELD = 51001;

  /** One method. {@code kind} is the runtime's MethodDescriptor.Type constant. */
  record Method(
      String protoName,
      String javaName,
      String constant,
      String kind,
      String requestClass,
      String responseClass,
      boolean clientStreams,
      boolean serverStreams,
      boolean fireAndForget,
      boolean idempotent) {}

  static ServiceModel of(
      FileDescriptorProto file, ServiceDescriptorProto service, JavaNames names) {
    String fullName =
        file.getPackage().isEmpty()
            ? service.getName()
            : file.getPackage() + "." + service.getName();
    List<Method> methods = new ArrayList<>();
    for (MethodDescriptorProto m : service.getMethodList()) {
      boolean cs = m.getClientStreaming();
      boolean ss = m.getServerStreaming();
      String kind =
          cs && ss ? "BIDI_STREAMING" : cs ? "CLIENT_STREAMING" : ss ? "SERVER_STREAMING" : "UNARY";
      boolean fnf = fireAndForget(m.getOptions());
      if (fnf && (cs || ss)) {
        throw new IllegalArgumentException(
            fullName + "/" + m.getName() + ": only a unary method can be fire-and-forget");
      }
      MethodOptions.IdempotencyLevel level = m.getOptions().getIdempotencyLevel();
      methods.add(
          new Method(
              m.getName(),
              javaIdentifier(JavaNames.camelCase(m.getName(), false)),
              constantName(m.getName()),
              kind,
              names.javaClass(m.getInputType()),
              names.javaClass(m.getOutputType()),
              cs,
              ss,
              fnf,
              level == MethodOptions.IdempotencyLevel.IDEMPOTENT
                  || level == MethodOptions.IdempotencyLevel.NO_SIDE_EFFECTS));
    }
    String javaPackage = JavaNames.javaPackage(file);
    String outerClass =
        file.getOptions().getOptimizeFor() == FileOptions.OptimizeMode.LITE_RUNTIME
            ? null
            : (javaPackage.isEmpty() ? "" : javaPackage + ".") + JavaNames.outerClassName(file);
    return new ServiceModel(
        file.getName(), javaPackage, service.getName(), fullName, outerClass, methods);
  }

  /**
   * Whether {@code millrace.rpc.fire_and_forget} is set. The plugin reads it as the unknown field
   * it is to a parser without the extension registered (a varint, true when not 0).
   */
  private static boolean fireAndForget(MethodOptions options) {
    UnknownFieldSet.Field field = options.getUnknownFields().getField(FIRE_AND_FORGET_FIELD);
    if (field == null) {
      return false;
    }
    List<Long> values = field.getVarintList();
    return !values.isEmpty() && values.get(values.size() - 1) != 0;
  }

  /** {@code GetFoo} becomes {@code GET_FOO}. */
  static String constantName(String name) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isUpperCase(c)
          && i > 0
          && (Character.isLowerCase(name.charAt(i - 1)) || Character.isDigit(name.charAt(i - 1)))) {
        out.append('_');
      }
      out.append(Character.toUpperCase(c));
    }
    return out.toString();
  }

  private static final Set<String> KEYWORDS =
      Set.of(
          "abstract",
          "assert",
          "boolean",
          "break",
          "byte",
          "case",
          "catch",
          "char",
          "class",
          "const",
          "continue",
          "default",
          "do",
          "double",
          "else",
          "enum",
          "extends",
          "final",
          "finally",
          "float",
          "for",
          "goto",
          "if",
          "implements",
          "import",
          "instanceof",
          "int",
          "interface",
          "long",
          "native",
          "new",
          "package",
          "private",
          "protected",
          "public",
          "return",
          "short",
          "static",
          "strictfp",
          "super",
          "switch",
          "synchronized",
          "this",
          "throw",
          "throws",
          "transient",
          "try",
          "void",
          "volatile",
          "while",
          "true",
          "false",
          "null",
          "record",
          "var",
          "yield",
          "sealed",
          "permits");

  static String javaIdentifier(String name) {
    return KEYWORDS.contains(name) ? name + "_" : name;
  }
}
