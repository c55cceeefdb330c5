package io.millrace.rpc.compiler;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java class of every message of the files protoc gives a plugin, named as protoc's own Java
 * generator names them: {@code java_package} (or the proto package), then for a file without {@code
 * java_multiple_files} its outer class ({@code java_outer_classname}, or the file name in camel
 * case, with {@code OuterClass} appended when a top-level type has that name), then the message and
 * the messages it is nested in.
 */
final class JavaNames {
  private final Map<String, String> classOfProtoType = new HashMap<>();

  JavaNames(List<FileDescriptorProto> files) {
    for (FileDescriptorProto file : files) {
      String javaPackage = javaPackage(file);
      String prefix = javaPackage.isEmpty() ? "" : javaPackage + ".";
      if (!file.getOptions().getJavaMultipleFiles()) {
        prefix += outerClassName(file) + ".";
      }
      String protoPrefix = file.getPackage().isEmpty() ? "." : "." + file.getPackage() + ".";
      for (DescriptorProto message : file.getMessageTypeList()) {
        index(message, protoPrefix, prefix);
      }
    }
  }

  private void index(DescriptorProto message, String protoPrefix, String javaPrefix) {
    String protoName = protoPrefix + message.getName();
    String javaName = javaPrefix + message.getName();
    classOfProtoType.put(protoName, javaName);
    for (DescriptorProto nested : message.getNestedTypeList()) {
      index(nested, protoName + ".", javaName + ".");
    }
  }

  /** The Java class of a fully qualified proto message name ({@code .pkg.Message}). */
  String javaClass(String protoType) {
    String name = classOfProtoType.get(protoType);
    if (name == null) {
      throw new IllegalArgumentException(
          "no message " + protoType + " among the files protoc gave");
    }
    return name;
  }

  static String javaPackage(FileDescriptorProto file) {
    return file.getOptions().hasJavaPackage()
        ? file.getOptions().getJavaPackage()
        : file.getPackage();
  }

  static String outerClassName(FileDescriptorProto file) {
    if (file.getOptions().hasJavaOuterClassname()) {
      return file.getOptions().getJavaOuterClassname();
    }
    String base = file.getName();
    base = base.substring(base.lastIndexOf('/') + 1);
    if (base.endsWith(".proto")) {
      base = base.substring(0, base.length() - ".proto".length());
    }
    String name = camelCase(base, true);
    Set<String> topLevel = new HashSet<>();
    file.getMessageTypeList().stream().map(DescriptorProto::getName).forEach(topLevel::add);
    file.getEnumTypeList().stream().map(EnumDescriptorProto::getName).forEach(topLevel::add);
    file.getServiceList().stream().map(ServiceDescriptorProto::getName).forEach(topLevel::add);
    return topLevel.contains(name) ? name + "OuterClass" : name;
  }

  /**
   * protoc's rule: letters after a non-letter are upper case, other characters but digits dropped.
   */
  static String camelCase(String s, boolean capitalizeFirst) {
    StringBuilder out = new StringBuilder(s.length());
    boolean upperNext = capitalizeFirst;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= 'a' && c <= 'z') {
        out.append(upperNext ? (char) (c - 'a' + 'A') : c);
        upperNext = false;
      } else if (c >= 'A' && c <= 'Z') {
        out.append(i == 0 && !capitalizeFirst ? (char) (c - 'A' + 'a') : c);
        upperNext = false;
      } else if (c >= '0' && c <= '9') {
        out.append(c);
        upperNext = true;
      } else {
        upperNext = true;
      }
    }
    return out.toString();
  }
}
