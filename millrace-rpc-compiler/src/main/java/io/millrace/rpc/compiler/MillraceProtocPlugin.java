package io.millrace.rpc.compiler;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorRequest;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The protoc plugin: reads a {@code CodeGeneratorRequest} on standard input and writes the response
 * on standard output, as protoc runs every plugin.
 *
 * <p>Parameter (protoc's {@code --millrace_opt}, or the Maven plugin's options): {@code
 * flavours=reactor} (comma separated: reactor, rxjava, mutiny, futures, observer) chooses the
 * flavour classes made next to {@code <Service>Rpc}; none by default, so that the generated code
 * needs no flavour library (futures and observer need only millrace-rpc).
 */
public final class MillraceProtocPlugin {
  private MillraceProtocPlugin() {}

  public static void main(String[] args) throws IOException {
    CodeGeneratorResponse response = generate(CodeGeneratorRequest.parseFrom(readAll(System.in)));
    OutputStream out = System.out;
    response.writeTo(out);
    out.flush();
  }

  private static byte[] readAll(InputStream in) throws IOException {
    return in.readAllBytes();
  }

  /** The files for {@code request}, or an error response protoc prints. */
  public static CodeGeneratorResponse generate(CodeGeneratorRequest request) {
    CodeGeneratorResponse.Builder response =
        CodeGeneratorResponse.newBuilder()
            .setSupportedFeatures(
                CodeGeneratorResponse.Feature.FEATURE_PROTO3_OPTIONAL_VALUE
                    | CodeGeneratorResponse.Feature.FEATURE_SUPPORTS_EDITIONS_VALUE)
            .setMinimumEdition(com.google.protobuf.DescriptorProtos.Edition.EDITION_PROTO2_VALUE)
            .setMaximumEdition(com.google.protobuf.DescriptorProtos.Edition.EDITION_2023_VALUE);
    try {
      Set<String> flavours = flavours(request.getParameter());
      JavaNames names = new JavaNames(request.getProtoFileList());
      Set<String> toGenerate = new LinkedHashSet<>(request.getFileToGenerateList());
      for (FileDescriptorProto file : request.getProtoFileList()) {
        if (!toGenerate.contains(file.getName())) {
          continue;
        }
        for (ServiceDescriptorProto service : file.getServiceList()) {
          ServiceModel model = ServiceModel.of(file, service, names);
          List<Generators.GeneratedFile> files = new ArrayList<>();
          files.add(Generators.base(model));
          for (String flavour : flavours) {
            files.add(Generators.FLAVOURS.get(flavour).apply(model));
          }
          for (Generators.GeneratedFile f : files) {
            response.addFile(
                CodeGeneratorResponse.File.newBuilder().setName(f.path()).setContent(f.content()));
          }
        }
      }
    } catch (IllegalArgumentException e) {
      return CodeGeneratorResponse.newBuilder().setError(e.getMessage()).build();
    }
    return response.build();
  }

  static Set<String> flavours(String parameter) {
    Set<String> flavours = new LinkedHashSet<>();
    for (String option : parameter.split(",")) {
      String o = option.trim();
      if (o.isEmpty()) {
        continue;
      }
      if (o.startsWith("flavours=") || o.startsWith("flavors=")) {
        for (String f : o.substring(o.indexOf('=') + 1).split("[+;:]")) {
          add(flavours, f.trim());
        }
      } else if (Generators.FLAVOURS.containsKey(o)) {
        add(flavours, o);
      } else {
        throw new IllegalArgumentException(
            "unknown option '"
                + o
                + "'; known: flavours="
                + String.join("+", Generators.flavourNames()));
      }
    }
    return flavours;
  }

  private static void add(Set<String> flavours, String f) {
    if (f.isEmpty()) {
      return;
    }
    if (!Generators.FLAVOURS.containsKey(f)) {
      throw new IllegalArgumentException(
          "unknown flavour '" + f + "'; known: " + String.join(", ", Generators.flavourNames()));
    }
    flavours.add(f);
  }
}
