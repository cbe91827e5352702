func.func @mesh_outside_module() {
  part.mesh @inner = <["dp"=2]>
  return
}
