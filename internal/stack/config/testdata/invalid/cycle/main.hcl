release "a" {
  chart      = "./charts/a"
  depends_on = [release.b]
}

release "b" {
  chart = "./charts/b"
  values = [{ upstream = release.c.name }]
}

release "c" {
  chart = "./charts/c"
  set   = { "a" = release.a.namespace }
}
