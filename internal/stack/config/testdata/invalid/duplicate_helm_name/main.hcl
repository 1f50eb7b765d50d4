release "a" {
  chart = "./charts/a"
  name  = "same"
}

release "b" {
  chart = "./charts/b"
  name  = "same"
}
