release "web" {
  chart = "./charts/web"
}

release "web" {
  chart = "./charts/other"
}
