release "a" {
  chart = "./charts/a"
  name  = "${release.a.namespace}-a"
}
