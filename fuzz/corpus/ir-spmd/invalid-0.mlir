part.mesh @mesh = <[""=2]>
