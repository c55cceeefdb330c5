#!/usr/bin/env bash
# Regenerates the test certificates in this directory (run it here; needs openssl). They are fixed
# files so that every run and every module sees the same ones; they are valid for 100 years and
# guard nothing. EC P-256 keys in PKCS#8 PEM, which both the JDK's TLS and OpenSSL read.
set -euo pipefail
days=36500
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
ca() { # name subject
  key "$1"
  openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days $days -sha256 -out "$1.pem" \
    -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign,cRLSign
}
leaf() { # name subject ca extendedKeyUsage subjectAltName
  key "$1"
  openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
  printf 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\n%s\n' \
    "$4" "${5:+subjectAltName=$5}" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -days $days -sha256 \
    -extfile "$1.ext" -out "$1.pem"
  rm "$1.csr" "$1.ext"
}
ca ca "Millrace Test CA"
ca other-ca "Another Test CA"
leaf server localhost ca serverAuth "DNS:localhost,IP:127.0.0.1"
leaf server-renewed localhost ca serverAuth "DNS:localhost,IP:127.0.0.1"
leaf wrong-host other.example ca serverAuth "DNS:other.example"
leaf client millrace-test-client ca clientAuth ""
leaf other-client stranger other-ca clientAuth ""
rm -f *.srl
